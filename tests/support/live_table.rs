//! The live truth suite's comparison table (`Table`): every comparison prints one row to the
//! process's stderr (libtest captures `eprintln!`, not direct writes) and appends it to
//! `target/live-truth.md`; failures are collected so every row prints before the test fails,
//! and a round that saw foreign activity (`Table::noisy`) is set aside, not judged.

use std::io::Write;
use std::sync::Once;

static HEADER: Once = Once::new();

fn write_row(line: &str) {
    let _ = std::io::stderr().write_all(line.as_bytes());
    let path = super::target_dir().join("live-truth.md");
    let _ = std::fs::create_dir_all(super::target_dir());
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Rows of one test; failures are collected so every row is printed before the test fails.
pub struct Table {
    test: &'static str,
    failures: Vec<String>,
    /// Foreign activity this round saw (`noisy`): the round is retried (`ticker::rounds`).
    noise: Vec<String>,
}

fn num(v: Option<f64>) -> String {
    v.map_or("null".to_string(), |x| format!("{x:.2}"))
}

impl Table {
    pub fn new(test: &'static str) -> Table {
        HEADER.call_once(|| {
            write_row(&format!(
                "\n## live truth run, unix time {}\n\n\
                 | test | metric | perftop | reference | diff | tolerance | |\n\
                 |---|---|---:|---:|---:|---:|---|\n",
                super::live::wall_ms() / 1000
            ));
        });
        Table {
            test,
            failures: Vec::new(),
            noise: Vec::new(),
        }
    }

    /// Foreign activity that keeps this round from being judged (another program's load
    /// starved ours, a reference window that cannot be placed): shown as a row, and
    /// `ticker::rounds` runs the round again.
    pub fn noisy(&mut self, what: &str) {
        write_row(&format!(
            "| {} | foreign activity | {what} | | | | noisy |\n",
            self.test
        ));
        self.noise.push(what.to_string());
    }

    /// What `noisy` recorded, if anything.
    pub fn noise(&self) -> Option<String> {
        (!self.noise.is_empty()).then(|| self.noise.join(", "))
    }

    /// A noisy round, not judged: its failures are listed for the record only.
    pub fn set_aside(self, round: usize) {
        write_row(&format!(
            "| {} | round {round} set aside (noisy); its {} failed row(s) not judged | | | | | note |\n",
            self.test,
            self.failures.len()
        ));
    }

    /// perftop must be within `tol` of the reference (absolute, in the metric's unit).
    pub fn close(&mut self, metric: &str, perftop: Option<f64>, reference: f64, tol: f64) {
        let diff = perftop.map(|p| p - reference);
        let ok = diff.is_some_and(|d| d.abs() <= tol);
        self.row(
            metric,
            num(perftop),
            format!("{reference:.2}"),
            diff,
            tol,
            ok,
        );
    }

    /// Like `close`, with the tolerance `rel` of the reference plus `abs`.
    pub fn rel(&mut self, metric: &str, perftop: Option<f64>, reference: f64, rel: f64, abs: f64) {
        self.close(metric, perftop, reference, reference.abs() * rel + abs);
    }

    /// perftop must lie within [lo - tol, hi + tol]: the reference was read just before and
    /// just after perftop's own read of a gauge that moves.
    pub fn bracket(&mut self, metric: &str, perftop: Option<f64>, lo: f64, hi: f64, tol: f64) {
        let (lo, hi) = (lo.min(hi), lo.max(hi));
        let diff = perftop.map(|p| {
            if p < lo {
                p - lo
            } else if p > hi {
                p - hi
            } else {
                0.0
            }
        });
        let ok = lo.is_finite() && hi.is_finite() && diff.is_some_and(|d| d.abs() <= tol);
        let reference = if lo == hi {
            format!("{lo:.2}")
        } else {
            format!("{lo:.2}..{hi:.2}")
        };
        self.row(metric, num(perftop), reference, diff, tol, ok);
    }

    /// A fact that must hold, shown as a row.
    pub fn holds(&mut self, metric: &str, perftop: String, reference: String, ok: bool) {
        let line = format!(
            "| {} | {metric} | {perftop} | {reference} | | | {} |\n",
            self.test,
            if ok { "ok" } else { "FAIL" }
        );
        write_row(&line);
        if !ok {
            self.failures.push(format!(
                "{metric}: perftop {perftop}, reference {reference}"
            ));
        }
    }

    /// A number worth keeping next to the others, with no assertion.
    pub fn note(&mut self, metric: &str, perftop: &str, reference: &str) {
        write_row(&format!(
            "| {} | {metric} | {perftop} | {reference} | | | note |\n",
            self.test
        ));
    }

    fn row(
        &mut self,
        metric: &str,
        perftop: String,
        reference: String,
        diff: Option<f64>,
        tol: f64,
        ok: bool,
    ) {
        let line = format!(
            "| {} | {metric} | {perftop} | {reference} | {} | {tol:.2} | {} |\n",
            self.test,
            num(diff),
            if ok { "ok" } else { "FAIL" }
        );
        write_row(&line);
        if !ok {
            self.failures.push(format!(
                "{metric}: perftop {perftop}, reference {reference}, tolerance {tol:.2}"
            ));
        }
    }

    pub fn finish(self) {
        // A check not run in `ticker::rounds` that saw foreign activity: not judged, counted.
        if let Some(what) = self.noise() {
            let failed = self.failures.len();
            crate::support::skip(
                self.test,
                &format!("too noisy to judge ({what}; {failed} row(s) not judged)"),
            );
            return;
        }
        assert!(
            self.failures.is_empty(),
            "{}: {} comparison(s) out of tolerance:\n{}",
            self.test,
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}
