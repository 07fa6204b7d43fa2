//! PSI: `/proc/pressure/{cpu,memory,io,irq}`, the share of time tasks stalled on each resource.

use super::Probe;
use crate::sample::{Pressure, PsiLine, PsiResource};

const DIR: &str = "proc/pressure";

/// Every pressure file the kernel has. A kernel without PSI (`CONFIG_PSI=n`, or booted with
/// `psi=0`, where the files exist but reading them fails with EOPNOTSUPP) gives no resources:
/// derive says "PSI not enabled", never 0%.
pub fn read_pressure(probe: &mut Probe) -> Pressure {
    // Which files there are is a boot-time fact (`irq` needs 6.1 and CONFIG_IRQ_TIME_ACCOUNTING):
    // asked of the listing the static tier keeps, not with an ENOENT every sample.
    let mut one = |name: &str| -> Option<PsiResource> {
        if !probe.static_list_dir(DIR).iter().any(|f| f == name) {
            return None;
        }
        let r = parse(&probe.quiet_text(DIR, name)?);
        if r.is_none() {
            probe.note(&format!("{DIR}/{name}"), "no some/full line");
        }
        r
    };
    Pressure {
        cpu: one("cpu"),
        memory: one("memory"),
        io: one("io"),
        irq: one("irq"),
    }
}

/// `some avg10=.. avg60=.. avg300=.. total=..` and `full ...` lines; `None` if neither parses.
pub fn parse(text: &str) -> Option<PsiResource> {
    let mut r = PsiResource::default();
    for line in text.lines() {
        let mut words = line.split_ascii_whitespace();
        let slot = match words.next() {
            Some("some") => &mut r.some,
            Some("full") => &mut r.full,
            _ => continue,
        };
        *slot = psi_line(words);
    }
    (r.some.is_some() || r.full.is_some()).then_some(r)
}

fn psi_line<'a>(words: impl Iterator<Item = &'a str>) -> Option<PsiLine> {
    let (mut a10, mut a60, mut a300, mut total) = (None, None, None, None);
    for w in words {
        let (k, v) = w.split_once('=')?;
        match k {
            "avg10" => a10 = v.parse::<f64>().ok().filter(|x| x.is_finite()),
            "avg60" => a60 = v.parse::<f64>().ok().filter(|x| x.is_finite()),
            "avg300" => a300 = v.parse::<f64>().ok().filter(|x| x.is_finite()),
            "total" => total = v.parse::<u64>().ok(),
            _ => {}
        }
    }
    Some(PsiLine {
        avg10: a10?,
        avg60: a60?,
        avg300: a300?,
        total_us: total?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_lines() {
        // Copied from this VM's 6.18 kernel (`/proc/pressure/memory`).
        let r = parse(
            "some avg10=1.00 avg60=1.10 avg300=1.48 total=772621618\n\
             full avg10=0.99 avg60=0.96 avg300=1.22 total=473096511\n",
        )
        .expect("parses");
        let some = r.some.expect("some");
        assert_eq!(
            (some.avg10, some.avg60, some.total_us),
            (1.0, 1.1, 772_621_618)
        );
        assert_eq!(r.full.map(|f| f.total_us), Some(473_096_511));
        // cpu before 5.13: `some` only.
        let cpu = parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n").expect("cpu");
        assert!(cpu.full.is_none());
    }

    #[test]
    fn garbled_is_unknown() {
        assert!(parse("").is_none());
        assert!(parse("some avg10=x avg60=0 avg300=0 total=1\n").is_none());
        assert!(
            parse("some avg10=1 avg60=1 avg300=1\n").is_none(),
            "no total"
        );
        assert!(parse("some avg10=inf avg60=1 avg300=1 total=1\n").is_none());
        let half = parse("some total=3 avg10=1 avg60=2 avg300=3\nfull garbage\n").expect("some");
        assert_eq!(half.some.map(|s| s.total_us), Some(3));
        assert!(half.full.is_none());
    }
}
