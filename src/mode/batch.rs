//! `perftop batch`: the panes as plain text, one report per interval (the first since boot),
//! `--count` reports or until interrupted, on the shared sampling clock.

use super::{read_sample, root_check};
use crate::assess::Assessor;
use crate::findings::Thresholds;
use crate::root::Root;
use crate::sample::Sample;
use crate::sampler::Clock;
use crate::source::Reader;
use anyhow::{Context, Result};
use std::io::Write;
use std::time::Duration;

pub fn batch(
    root: &Root,
    interval: Duration,
    count: Option<u64>,
    width: usize,
    thresholds: &Thresholds,
) -> Result<()> {
    root_check(root)?;
    let mut reader = Reader::new(root.clone());
    let mut clock = Clock::new(interval);
    let mut prev: Option<Sample> = None;
    // Disk baselines carry from one report to the next, as in the live view.
    let mut assessor = Assessor::new(thresholds.clone());
    let mut n = 0u64;
    let mut out = std::io::stdout().lock();
    loop {
        let cur = read_sample(&mut reader);
        let d = assessor.next(prev.as_ref(), &cur);
        n += 1;
        let text = crate::text::report(&d, n, width.max(60));
        out.write_all(text.as_bytes())
            .context("writing to stdout")?;
        out.flush().context("writing to stdout")?;
        prev = Some(cur);
        if count.is_some_and(|c| n >= c) || !clock.wait() {
            return Ok(());
        }
    }
}
