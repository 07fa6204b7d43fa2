//! `perftop completions SHELL`: a completion script for bash, zsh, fish (and elvish,
//! PowerShell), from the same clap definitions as `--help`.

use anyhow::{Context, Result};
use std::io::Write;

/// Writes `shell`'s completion script for `cli` (`Cli::command()`) to `out`.
pub fn write(
    shell: clap_complete::Shell,
    mut cli: clap::Command,
    out: &mut dyn Write,
) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cli, "perftop", &mut script);
    out.write_all(&script)
        .context("writing the completion script")
}
