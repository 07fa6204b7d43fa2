//! `perftop export`: each interval's findings and metrics to a node_exporter textfile and/or
//! `/metrics`, on the machinery of `crate::export` (page, textfile, HTTP server).

use crate::assess::Assessor;
use crate::export::{http, textfile, Page, Renderer};
use crate::findings::Thresholds;
use crate::root::Root;
use crate::sampler::Clock;
use crate::source::Reader;
use anyhow::{bail, Result};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct ExportArgs {
    pub textfile: Option<PathBuf>,
    pub listen: Option<String>,
    pub interval: Duration,
    /// Stop after this many intervals (tests, one-shot cron use).
    pub count: Option<u64>,
}

pub fn export(root: &Root, args: &ExportArgs, thresholds: &Thresholds) -> Result<()> {
    if args.textfile.is_none() && args.listen.is_none() {
        bail!("perftop export needs --textfile DIR, --listen ADDR:PORT, or both");
    }
    let textfile = match &args.textfile {
        Some(dir) => Some(textfile::Textfile::open(dir)?),
        None => None,
    };
    let latest: Arc<Mutex<Option<Arc<Page>>>> = Arc::default();
    let server = match &args.listen {
        Some(addr) => Some(http::serve(addr, Arc::clone(&latest))?),
        None => None,
    };
    let (stop, wake) = Clock::signals()?;
    if let Some(addr) = server.as_ref().map(|s| s.addr) {
        eprintln!("perftop: serving http://{addr}/metrics");
    }
    if let Some(t) = &textfile {
        eprintln!("perftop: writing {}", t.path().display());
    }
    let mut reader = Reader::new(root.clone());
    let mut assessor = Assessor::new(thresholds.clone());
    let mut prev = reader.sample();
    let mut clock = Clock::new(args.interval).wake_on(Arc::clone(&stop), wake);
    let start_ms = super::cpu_ms();
    let mut n = 0u64;
    let mut renderer = Renderer::default();
    while clock.wait() {
        let cur = reader.sample();
        let d = assessor.next(Some(&prev), &cur);
        let page = renderer.render(&d, assessor.baselines(), thresholds, cur.problems.len());
        if let Some(t) = &textfile {
            // A full disk or a removed directory is said and retried next interval: the
            // feed must outlive a bad minute of the host it watches.
            if let Err(e) = t.write(&page.text) {
                eprintln!("perftop: {e:#}");
            }
        }
        let old = latest
            .lock()
            .ok()
            .and_then(|mut l| l.replace(Arc::new(page)));
        if let Some(old) = old {
            renderer.recycle(old);
        }
        prev = cur;
        n += 1;
        if args.count.is_some_and(|c| n >= c) {
            break;
        }
    }
    if let Some(t) = &textfile {
        t.clean();
    }
    let hwm_kb = super::peak_rss_kb();
    eprintln!(
        "perftop: exported {n} intervals ({}, peak RSS {:.1} MB)",
        super::cpu_words(super::cpu_ms(), start_ms, n, "interval"),
        hwm_kb as f64 / 1024.0
    );
    Ok(())
}
