//! perftop on other hosts over the system `ssh`: the target (`[USER@]HOST[:PORT]`), the ssh
//! command line (`PERFTOP_SSH` overrides `ssh`), the copy of this binary kept in the remote's
//! `~/.cache/perftop/` (`install`), the link that streams its samples back (`link`) and the
//! tweaks run there (`tweak`).
//!
//! Why the system `ssh` and not a library: the user's config, agent, jump hosts and
//! known_hosts then apply as they do for every other ssh they run, and nothing new is trusted.

pub mod install;
pub mod link;
pub mod tweak;

use anyhow::{bail, Result};
use std::process::Command;

/// Where the remote copy lives, under the remote user's home (never anywhere else).
pub const CACHE_DIR: &str = ".cache/perftop";

/// The remote copy's file name: one per version, reused next time.
pub fn remote_name() -> String {
    format!("perftop-{}", env!("CARGO_PKG_VERSION"))
}

/// `[USER@]HOST[:PORT]` (`[::1]:2222` for an IPv6 address with a port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

impl Target {
    pub fn parse(s: &str) -> Result<Target> {
        let (user, rest) = match s.rsplit_once('@') {
            Some((u, r)) => (Some(u.to_string()), r),
            None => (None, s),
        };
        let (host, port) = if let Some(r) = rest.strip_prefix('[') {
            let Some((h, after)) = r.split_once(']') else {
                bail!("'{s}': no closing ] after the address");
            };
            match after.strip_prefix(':') {
                Some(p) => (h, Some(p)),
                None if after.is_empty() => (h, None),
                None => bail!("'{s}': expected :PORT after ]"),
            }
        } else if rest.matches(':').count() == 1 {
            let (h, p) = rest.split_once(':').unwrap_or((rest, ""));
            (h, Some(p))
        } else {
            (rest, None)
        };
        let port = match port {
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| anyhow::anyhow!("'{s}': '{p}' is not a port"))?,
            ),
            None => None,
        };
        // A name that starts with '-' would reach ssh as an option (-oProxyCommand=...).
        let bad = |t: &str| {
            t.is_empty()
                || t.starts_with('-')
                || t.chars().any(|c| c.is_whitespace() || c.is_control())
        };
        if bad(host) || user.as_deref().is_some_and(bad) {
            bail!("'{s}' is not [USER@]HOST[:PORT]");
        }
        Ok(Target {
            user,
            host: host.to_string(),
            port,
        })
    }

    /// As typed, for the screen: `root@db1:2222`.
    pub fn label(&self) -> String {
        let mut s = String::new();
        if let Some(u) = &self.user {
            s.push_str(u);
            s.push('@');
        }
        if self.host.contains(':') && self.port.is_some() {
            s.push_str(&format!("[{}]", self.host));
        } else {
            s.push_str(&self.host);
        }
        if let Some(p) = self.port {
            s.push_str(&format!(":{p}"));
        }
        s
    }
}

/// The ssh program and its own options: `PERFTOP_SSH` split as a shell splits words
/// (`ssh -F /path/config`), else `ssh`.
pub fn ssh_program() -> Result<Vec<String>> {
    match std::env::var("PERFTOP_SSH") {
        Ok(v) if !v.trim().is_empty() => {
            let words = split_words(&v)?;
            if words.is_empty() {
                bail!("PERFTOP_SSH is empty");
            }
            Ok(words)
        }
        _ => Ok(vec!["ssh".into()]),
    }
}

/// Splits `s` into words as sh does, for quotes and backslashes only (no expansions).
pub fn split_words(s: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => bail!("PERFTOP_SSH: unterminated '"),
                    }
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => bail!("PERFTOP_SSH: unterminated \""),
                        },
                        Some(c) => w.push(c),
                        None => bail!("PERFTOP_SSH: unterminated \""),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => cur.get_or_insert_with(String::new).push(c),
                None => bail!("PERFTOP_SSH: ends with a backslash"),
            },
            c if c.is_whitespace() => words.extend(cur.take()),
            c => cur.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(cur);
    Ok(words)
}

/// Single-quotes `s` for the remote's sh.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `ssh [PERFTOP_SSH options] -T -o BatchMode=yes [-l USER] [-p PORT] -- HOST COMMAND`.
/// BatchMode: no password or host-key prompt ever competes with the dashboard for the
/// terminal; keys and the agent are how `perftop ssh` logs in. The keep-alives notice a link
/// that died without a word within about 15 s.
pub fn ssh_command(t: &Target, remote_cmd: &str) -> Result<Command> {
    let prog = ssh_program()?;
    let mut c = Command::new(&prog[0]);
    c.args(&prog[1..]);
    c.args([
        "-T",
        "-o",
        "BatchMode=yes",
        "-o",
        "ServerAliveInterval=5",
        "-o",
        "ServerAliveCountMax=3",
    ]);
    if let Some(u) = &t.user {
        c.args(["-l", u]);
    }
    if let Some(p) = t.port {
        c.args(["-p", &p.to_string()]);
    }
    c.arg("--").arg(&t.host).arg(remote_cmd);
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_refuse_options() {
        let t = Target::parse("root@db1:2222").expect("target");
        assert_eq!(
            t,
            Target {
                user: Some("root".into()),
                host: "db1".into(),
                port: Some(2222)
            }
        );
        assert_eq!(t.label(), "root@db1:2222");
        let t = Target::parse("[::1]:22").expect("v6");
        assert_eq!((t.host.as_str(), t.port), ("::1", Some(22)));
        assert_eq!(Target::parse("fe80::1").expect("bare v6").port, None);
        assert!(Target::parse("-oProxyCommand=x").is_err());
        assert!(Target::parse("-x@h").is_err());
        assert!(Target::parse("h:0").is_err());
        assert!(Target::parse("h:ssh").is_err());
    }

    #[test]
    fn words_split_as_sh_splits_them() {
        assert_eq!(
            split_words(r#"ssh -F '/tmp/my config' -o "A=b c" x\ y"#).expect("words"),
            ["ssh", "-F", "/tmp/my config", "-o", "A=b c", "x y"]
        );
        assert!(split_words("ssh 'open").is_err());
        assert_eq!(sh_quote("a'b"), r"'a'\''b'");
    }
}
