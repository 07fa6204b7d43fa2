//! `perftop diff`: two recordings, or two windows of one, compared (`crate::explain::diff`).

use crate::explain::diff::{diff, json, side, text};
use crate::findings::Thresholds;
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

pub struct DiffArgs {
    pub a: PathBuf,
    pub b: Option<PathBuf>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub b_from: Option<String>,
    pub b_to: Option<String>,
    pub format: String,
}

pub fn run(args: &DiffArgs, output: Option<&Path>, t: &Thresholds) -> Result<()> {
    let json_out = match args.format.to_ascii_lowercase().as_str() {
        "text" | "txt" => false,
        "json" => true,
        f => bail!("unknown format '{f}' (text, json)"),
    };
    let rec_a = crate::record::open(&args.a)?;
    let a = side(&rec_a, args.from.as_deref(), args.to.as_deref(), t, 0)?;
    let b = match &args.b {
        Some(p) => {
            drop(rec_a);
            let rec_b = crate::record::open(p)?;
            side(&rec_b, args.b_from.as_deref(), args.b_to.as_deref(), t, 0)?
        }
        None if args.b_from.is_some() || args.b_to.is_some() => {
            side(&rec_a, args.b_from.as_deref(), args.b_to.as_deref(), t, 0)?
        }
        None => {
            bail!("diff needs a second recording B, or --b-from/--b-to for a second window of A")
        }
    };
    let d = diff(a, b);
    for w in &d.warnings {
        eprintln!("perftop: warning: {}", crate::safe::line(w));
    }
    let out = if json_out { json(&d) } else { text(&d) };
    super::explain::emit(&out, output)
}
