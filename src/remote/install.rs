//! The remote copy of perftop: one probe (`uname`, and the checksum of the copy in
//! `~/.cache/perftop/perftop-VERSION` when there is one), then, when it is missing or not this
//! binary, this binary (`/proc/self/exe`) sent through the same ssh: written to a new file
//! made by `mktemp` in that directory, its SHA-256 checked there, made executable and renamed
//! over the name (a rename replaces a link; it never writes through one). Nothing is written
//! anywhere else on the remote, and nothing there needs root.
//!
//! A binary built for another architecture, or a remote that is not Linux, is refused before
//! anything is sent.

use super::{remote_name, sh_quote, ssh_command, Target, CACHE_DIR};
use anyhow::{anyhow, bail, Context, Result};
use std::process::{Command, Stdio};

/// What the probe found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Probe {
    pub os: String,
    pub arch: String,
    /// `uname -n`: the remote's own name, for the header.
    pub name: String,
    /// SHA-256 of the remote copy, when it exists and is executable.
    pub sum: Option<String>,
}

/// How the remote copy was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Copy {
    Reused,
    Copied { bytes: u64 },
}

/// The remote command that runs the remote copy (through `sh`, whatever the login shell).
pub fn remote_exe() -> String {
    format!("\"$HOME\"/{CACHE_DIR}/{}", remote_name())
}

fn probe_script() -> String {
    format!(
        "f={exe}; echo \"os $(uname -s)\"; echo \"arch $(uname -m)\"; echo \"name $(uname -n)\"; \
         if [ -f \"$f\" ] && [ -x \"$f\" ]; then s=$(sha256sum < \"$f\") && echo \"sum ${{s%% *}}\"; \
         else echo \"sum none\"; fi",
        exe = remote_exe()
    )
}

fn install_script(sum: &str) -> String {
    let name = remote_name();
    format!(
        "set -e; umask 077; d=\"$HOME\"/{CACHE_DIR}; mkdir -p \"$d\"; chmod 700 \"$d\"; \
         t=$(mktemp \"$d/.{name}.XXXXXX\"); \
         if ! cat > \"$t\"; then rm -f \"$t\"; exit 2; fi; \
         s=$(sha256sum < \"$t\"); s=${{s%% *}}; \
         if [ \"$s\" != {sum} ]; then rm -f \"$t\"; echo \"copy arrived with checksum $s, not {sum}\" >&2; exit 3; fi; \
         chmod 700 \"$t\"; mv -f \"$t\" \"$d/{name}\""
    )
}

/// Runs `script` with `sh -c` on the remote (its login shell may not be sh).
pub fn sh_c(script: &str) -> String {
    format!("exec sh -c {}", sh_quote(script))
}

pub fn parse_probe(out: &str) -> Result<Probe> {
    let mut p = Probe::default();
    for line in out.lines() {
        let Some((k, v)) = line.split_once(' ') else {
            continue;
        };
        let v = v.trim().to_string();
        match k {
            "os" => p.os = v,
            "arch" => p.arch = v,
            "name" => p.name = v,
            "sum" if v != "none" => p.sum = Some(v),
            _ => {}
        }
    }
    if p.os.is_empty() || p.arch.is_empty() {
        bail!(
            "the remote's answer to the probe is not what perftop asked for: {}",
            crate::safe::line(out.trim())
        );
    }
    Ok(p)
}

/// `uname -m` as Rust names the architecture (`std::env::consts::ARCH`).
pub fn rust_arch(uname_m: &str) -> &str {
    match uname_m {
        "arm64" | "aarch64" | "aarch64_be" => "aarch64",
        "i386" | "i486" | "i586" | "i686" => "x86",
        "ppc64le" | "ppc64" => "powerpc64",
        m if m.starts_with("armv") => "arm",
        m => m,
    }
}

/// Refuses a remote this binary cannot run on.
pub fn check_target(t: &Target, p: &Probe) -> Result<()> {
    let here = std::env::consts::ARCH;
    if p.os != "Linux" {
        bail!(
            "{} runs {}, and perftop reads Linux's /proc and /sys",
            t.label(),
            crate::safe::line(&p.os)
        );
    }
    if rust_arch(&p.arch) != here {
        bail!(
            "{} is {} and this perftop is built for {here}-linux: build perftop for {} \
             (docs/fleet.md) and run perftop ssh from that build",
            t.label(),
            crate::safe::line(&p.arch),
            crate::safe::line(rust_arch(&p.arch))
        );
    }
    Ok(())
}

/// Runs a one-shot ssh; its stdout on success, else an error with its stderr.
fn ssh_once(t: &Target, script: &str, stdin: Stdio) -> Result<String> {
    let mut c = ssh_command(t, &sh_c(script))?;
    let out = c
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .context("running ssh")?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!(
            "ssh {} failed ({}): {}",
            t.label(),
            out.status,
            crate::safe::line(err.trim())
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The SHA-256 of this binary, by the same `sha256sum` the remote checks with.
fn own_sum() -> Result<String> {
    let exe = format!("/proc/{}/exe", std::process::id());
    let out = Command::new("sha256sum")
        .arg(&exe)
        .stdin(Stdio::null())
        .output()
        .context("running sha256sum on this binary")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let sum = text.split_whitespace().next().unwrap_or_default();
    if !out.status.success() || sum.len() != 64 || !sum.chars().all(|c| c.is_ascii_hexdigit()) {
        bail!(
            "sha256sum of {exe} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(sum.to_string())
}

/// Makes sure the remote has this very binary in its cache: probes, checks the target, copies
/// when the copy is missing or differs. Returns the probe and what was done.
pub fn ensure(t: &Target) -> Result<(Probe, Copy)> {
    let probe = parse_probe(&ssh_once(t, &probe_script(), Stdio::null())?)?;
    check_target(t, &probe)?;
    let sum = own_sum()?;
    if probe.sum.as_deref() == Some(sum.as_str()) {
        return Ok((probe, Copy::Reused));
    }
    let exe = std::fs::File::open("/proc/self/exe").context("opening this binary")?;
    let bytes = exe.metadata().map(|m| m.len()).unwrap_or(0);
    ssh_once(t, &install_script(&sum), Stdio::from(exe))
        .map_err(|e| anyhow!("copying perftop to {}:~/{CACHE_DIR}/: {e:#}", t.label()))?;
    Ok((probe, Copy::Copied { bytes }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_reads_and_other_targets_are_refused() {
        let p = parse_probe("os Linux\narch x86_64\nname db1\nsum none\n").expect("probe");
        assert_eq!(p.name, "db1");
        assert_eq!(p.sum, None);
        assert!(parse_probe("Welcome to db1!\n").is_err());
        let t = Target::parse("db1").expect("target");
        let other = if std::env::consts::ARCH == "aarch64" {
            "x86_64"
        } else {
            "aarch64"
        };
        let e = check_target(
            &t,
            &Probe {
                arch: other.into(),
                ..p.clone()
            },
        )
        .expect_err("another architecture");
        assert!(format!("{e}").contains(&format!("db1 is {other}")), "{e}");
        let e = check_target(
            &t,
            &Probe {
                os: "FreeBSD".into(),
                ..p
            },
        )
        .expect_err("not Linux");
        assert!(format!("{e}").contains("FreeBSD"), "{e}");
        assert_eq!(rust_arch("arm64"), "aarch64");
    }
}
