//! The network knobs: the socket sysctls (`net.core.somaxconn`, `net.ipv4.tcp_max_syn_backlog`,
//! `net.core.rmem_max`, `net.core.wmem_max`), bounded like the netdev ones, and RPS per rx
//! queue (`net.DEV.rx-N.rps_cpus`): the way to spread a single-queue NIC's receive work,
//! which moving its one IRQ cannot do.

use super::knob::{gate, single, Allowed, Knob};
use super::range::Unit;
use super::Ctx;
use crate::cpulist::CpuList;

/// The socket sysctls, in registry order. Buffer caps run from the kernel's default (212992)
/// to 256 MiB: they are per socket, so a high cap multiplied by many sockets is real memory.
pub fn sysctls(ctx: &Ctx) -> Vec<Knob> {
    const BUF: (u64, u64, Unit) = (212_992, 256 << 20, Unit::Bytes);
    [
        (
            "net.core.somaxconn",
            "cap on every listen() backlog (accept queue); the application's own backlog \
             argument still caps its socket",
            (128, 65_535, Unit::Plain),
        ),
        (
            "net.ipv4.tcp_max_syn_backlog",
            "half-open connections (SYN queue) kept per listener",
            (128, 262_144, Unit::Plain),
        ),
        (
            "net.core.rmem_max",
            "largest receive buffer a socket may ask for (SO_RCVBUF)",
            BUF,
        ),
        (
            "net.core.wmem_max",
            "largest send buffer a socket may ask for (SO_SNDBUF)",
            BUF,
        ),
    ]
    .into_iter()
    .map(|(name, description, (min, max, unit))| {
        single(
            ctx,
            name,
            description,
            &sysctl_rel(name),
            Allowed::Range { min, max, unit },
        )
    })
    .collect()
}

fn sysctl_rel(name: &str) -> String {
    format!("proc/sys/{}", name.replace('.', "/"))
}

/// `net.DEV.rx-N.rps_cpus` → (DEV, N). Device names may contain dots (`eth0.100`): the queue
/// is the part after the last `.rx-`.
pub fn parse_rps_name(name: &str) -> Option<(&str, u32)> {
    let rest = name.strip_prefix("net.")?.strip_suffix(".rps_cpus")?;
    let (dev, q) = rest.rsplit_once(".rx-")?;
    if dev.is_empty() || dev.contains('/') || dev.starts_with('.') {
        return None;
    }
    Some((dev, q.parse().ok()?))
}

/// RPS of one rx queue: the CPUs that process its packets after the IRQ's CPU hands them on.
/// Values are a CPU list (`0-3`, `2,5`; empty or `none` turns RPS off) or a hex mask (`0xf`),
/// checked against the online CPUs and written as the mask the kernel prints back.
pub fn rps(ctx: &Ctx, dev: &str, q: u32) -> Knob {
    let online: Vec<u32> = ctx
        .root
        .read_line("sys/devices/system/cpu/online")
        .and_then(|l| CpuList::parse(&l))
        .map(|c| c.ids().to_vec())
        .unwrap_or_default();
    let rel = format!("sys/class/net/{dev}/queues/rx-{q}/rps_cpus");
    let mut k = single(
        ctx,
        "rps",
        "RPS: CPUs that process this rx queue's packets (spreads a single-queue NIC)",
        &rel,
        Allowed::Range {
            min: 0,
            max: 0,
            unit: Unit::Plain,
        },
    );
    let digits = k.current[0]
        .as_deref()
        .map(|m| m.chars().filter(char::is_ascii_hexdigit).count())
        .unwrap_or(0);
    k.allowed = Allowed::CpuMask { online, digits };
    k.targets[0].label = format!("{dev}/rx-{q}");
    if k.current[0].is_some() && digits == 0 {
        k.disabled = Some(format!("{rel}: not a CPU mask"));
    }
    gate(ctx, &mut k);
    k
}

/// A typed RPS value as the mask the file takes: `digits` hex digits (the width the kernel
/// prints, one per 4 possible CPUs), in comma-separated 32-bit words.
pub fn mask_value(typed: &str, online: &[u32], digits: usize) -> Result<String, String> {
    let t = typed.trim();
    let cpus = if t.is_empty() || t == "none" {
        CpuList::from_ids(Vec::new())
    } else if let Some(hex) = t.strip_prefix("0x") {
        CpuList::parse_mask(hex).ok_or_else(|| format!("{typed:?} is not a hex CPU mask"))?
    } else {
        CpuList::parse(t).ok_or_else(|| format!("{typed:?} is not a CPU list (0-3,8)"))?
    };
    if let Some(off) = cpus.ids().iter().find(|c| !online.contains(c)) {
        return Err(format!(
            "CPU {off} is not online (online: {})",
            CpuList::from_ids(online.to_vec())
        ));
    }
    let top = cpus.ids().last().map_or(0, |&c| c as usize / 4 + 1);
    if top > digits {
        return Err(format!(
            "CPU {} does not fit the {digits}-digit mask",
            cpus.ids().last().copied().unwrap_or(0)
        ));
    }
    let mut nibbles = vec![0u8; digits];
    for &c in cpus.ids() {
        let i = c as usize / 4;
        nibbles[digits - 1 - i] |= 1 << (c % 4);
    }
    let mut s = String::new();
    for (i, n) in nibbles.iter().enumerate() {
        // A comma before every group of 8 digits counted from the right, as the kernel prints.
        if i > 0 && (digits - i) % 8 == 0 {
            s.push(',');
        }
        s.push(char::from_digit(u32::from(*n), 16).unwrap_or('0'));
    }
    Ok(s)
}

/// A value in the file's own format: a mask of online CPUs only.
pub fn check_mask(value: &str, online: &[u32]) -> Result<(), String> {
    let cpus =
        CpuList::parse_mask(value).ok_or_else(|| format!("{value:?} is not a hex CPU mask"))?;
    match cpus.ids().iter().find(|c| !online.contains(c)) {
        Some(off) => Err(format!("CPU {off} is not online")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rps_names_and_masks() {
        assert_eq!(parse_rps_name("net.eth0.rx-0.rps_cpus"), Some(("eth0", 0)));
        assert_eq!(
            parse_rps_name("net.eth0.100.rx-3.rps_cpus"),
            Some(("eth0.100", 3))
        );
        assert_eq!(parse_rps_name("net.../x.rx-0.rps_cpus"), None);
        assert_eq!(parse_rps_name("net.core.somaxconn"), None);
        let online: Vec<u32> = (0..2).collect();
        assert_eq!(mask_value("0-1", &online, 1), Ok("3".into()));
        assert_eq!(mask_value("1", &online, 1), Ok("2".into()));
        assert_eq!(mask_value("0x1", &online, 1), Ok("1".into()));
        assert_eq!(mask_value("none", &online, 1), Ok("0".into()));
        assert!(mask_value("2", &online, 1).is_err(), "CPU 2 is offline");
        assert!(mask_value("zz", &online, 1).is_err());
        let big: Vec<u32> = (0..64).collect();
        assert_eq!(
            mask_value("0-1,33", &big, 16),
            Ok("00000002,00000003".into())
        );
        assert_eq!(mask_value("4", &big, 16), Ok("00000000,00000010".into()));
        assert!(check_mask("3", &online).is_ok());
        assert!(check_mask("4", &online).is_err());
    }
}
