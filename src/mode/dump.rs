//! `perftop dump`: a recording as text, JSON, CSV or OpenMetrics, on the machinery of
//! `crate::record` (the reader and the dump writers).

use crate::findings::Thresholds;
use crate::record::dump::{dump, DumpOptions, Format};
use anyhow::Result;
use std::path::Path;

pub fn run(
    path: &Path,
    format: &str,
    from: Option<String>,
    to: Option<String>,
    pane: Option<String>,
    width: usize,
    thresholds: &Thresholds,
) -> Result<()> {
    let format: Format = format.parse()?;
    let rec = crate::record::open(path)?;
    let opts = DumpOptions {
        format,
        from,
        to,
        pane,
        width,
        thresholds: thresholds.clone(),
        threads: 0,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    dump(&rec, &opts, &mut out, &mut |w| {
        eprintln!("perftop: warning: {}", crate::safe::line(&w))
    })?;
    Ok(())
}
