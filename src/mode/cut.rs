//! `perftop cut`: a time range of a recording into a file of its own, on the machinery of
//! `crate::record::cut`, and the one line that says what was kept.

use crate::record::cut::CutArgs;
use crate::safe;
use anyhow::Result;

/// Cuts, then says on stderr how many samples and markers went where.
pub fn run(args: CutArgs) -> Result<()> {
    let s = crate::record::cut::cut_cmd(&args)?;
    let (input, output) = (&args.input, &args.output);
    eprintln!(
        "perftop: cut {} samples ({} .. {}{}), {} markers, {} bytes from {} to {}{}",
        s.samples,
        crate::record::format_rfc3339(s.first_ms),
        crate::record::format_rfc3339(s.last_ms),
        if s.opener {
            ", and the one before, which opens the first interval"
        } else {
            ""
        },
        s.markers,
        s.bytes,
        safe::line(&input.display().to_string()),
        safe::line(&output.display().to_string()),
        if s.skipped > 0 {
            format!("; {} undecodable samples left out", s.skipped)
        } else {
            String::new()
        }
    );
    Ok(())
}
