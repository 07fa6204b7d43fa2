//! The user's config file: `--config FILE`, else `$XDG_CONFIG_HOME/perftop/config.toml` (or
//! `~/.config/perftop/config.toml`). Absent is fine (defaults); present but wrong is an error
//! that names the file and the field, so a typo never silently falls back to defaults.

use crate::findings::Thresholds;
use anyhow::{Context, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Findings thresholds (`[findings]` table; field names as in the README table).
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

/// A config file is a few hundred bytes; anything near this is not one.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Loads `explicit` (must exist) or the default path (may be absent).
pub fn load(explicit: Option<&Path>) -> Result<Config> {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None => match default_path().filter(|p| p.is_file()) {
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
