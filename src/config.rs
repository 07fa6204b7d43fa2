//! The config file, first found of: `--config FILE` (must exist), the user's
//! `$XDG_CONFIG_HOME/perftop/config.toml` (or `~/.config/perftop/config.toml`), the system's
//! `/etc/perftop/config.toml` (what the recorder service reads: it has no user config). One file
//! is read whole, never merged with another. Absent is fine (defaults); present but wrong is an
//! error that names the file and the field, so a typo never silently falls back to defaults.

use crate::findings::Thresholds;
use anyhow::{Context, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Findings thresholds (`[findings]` table; field names as in docs/findings.md).
    pub findings: Thresholds,
    /// Default theme when `--theme` is not given.
    pub theme: Option<String>,
}

pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("perftop/config.toml"))
}

/// Where `/` is for perftop's system files (`/etc/perftop`, `/var/lib/perftop`):
/// `$PERFTOP_SYSTEM_ROOT` when set to an absolute path, so tests and packaging checks need not
/// write under `/etc`; `/` otherwise.
pub fn system_root() -> PathBuf {
    std::env::var_os("PERFTOP_SYSTEM_ROOT")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// The system-wide config: `/etc/perftop/config.toml` (under [`system_root`]).
pub fn system_path() -> PathBuf {
    system_root().join("etc/perftop/config.toml")
}

/// The config file `load(None)` reads: the user's when it exists, else the system's when it
/// exists, else none (built-in defaults).
pub fn find() -> Option<PathBuf> {
    default_path()
        .filter(|p| p.is_file())
        .or_else(|| Some(system_path()).filter(|p| p.is_file()))
}

/// A config file is a few hundred bytes; anything near this is not one.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Loads `explicit` (must exist), else the user's or the system's config (see [`find`]).
pub fn load(explicit: Option<&Path>) -> Result<Config> {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None => match find() {
            Some(p) => p,
            None => return Ok(Config::default()),
        },
    };
    let text = crate::root::read_regular_text(&path, MAX_CONFIG_BYTES)
        .with_context(|| format!("reading {}", path.display()))?;
    parse(&text).with_context(|| format!("config {}", path.display()))
}

pub fn parse(text: &str) -> Result<Config> {
    let cfg: Config = toml::from_str(text)?;
    cfg.findings.validate()?;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_and_errors() {
        let cfg = parse("theme = \"light\"\n[findings]\nraise_after = 5\n").expect("config");
        assert_eq!(cfg.findings.raise_after, 5);
        assert_eq!(cfg.theme.as_deref(), Some("light"));
        assert_eq!(
            cfg.findings.clear_after,
            Thresholds::default().clear_after,
            "unset fields keep their defaults"
        );
        assert!(parse("[findings]\nno_such_rule = 1\n").is_err());
        assert!(parse("[findings]\nraise_after = 0\n").is_err());
        assert!(parse("this is not toml").is_err());
        assert!(load(Some(Path::new("/nonexistent/perftop.toml"))).is_err());
        assert_eq!(parse("").expect("empty").findings.raise_after, 3);
    }
}
