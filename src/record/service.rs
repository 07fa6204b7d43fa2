//! The always-on recorder: the systemd unit `perftop record --print-unit` prints, and the system
//! recording (`/var/lib/perftop/perftop.ptrec`) that `replay` and `dump` open when given no path.

use super::writer::list_segments;
use super::{parse_duration, parse_size};
use anyhow::{bail, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The unit's state directory name (`StateDirectory=`): systemd creates `/var/lib/perftop`.
pub const STATE_DIRECTORY: &str = "perftop";
/// Where the service records (inside the state directory).
pub const SYSTEM_RECORDING: &str = "/var/lib/perftop/perftop.ptrec";
/// The service's retention defaults: a week, at most 1 GiB. At 1 s a 2-CPU host writes ~33 MB a
/// day (~390 B/sample, docs/recording.md), so a week fits; a 64-CPU host ~340 MB a day, so
/// there the size limit keeps about three days.
pub const DEFAULT_RETAIN: &str = "7d";
pub const DEFAULT_MAX_SIZE: &str = "1G";

/// The system recording as this process sees it (under `$PERFTOP_SYSTEM_ROOT`, see
/// `config::system_root`).
pub fn system_recording() -> PathBuf {
    crate::config::system_root().join(SYSTEM_RECORDING.trim_start_matches('/'))
}

/// `path`, or the system recording when none was given; a system recording with no segment is
/// an error that says what to do.
pub fn recording_or_system(path: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(p) = path {
        return Ok(p);
    }
    let sys = system_recording();
    if list_segments(&sys).is_empty() {
        bail!(
            "no recording at {}; is the perftop service running? pass a path (perftop record --print-unit sets the service up)",
            sys.display()
        );
    }
    Ok(sys)
}

/// What goes into the unit's `ExecStart`.
#[derive(Debug, Clone)]
pub struct UnitArgs {
    /// The perftop binary (absolute).
    pub bin: PathBuf,
    /// `-o`; must lie in `/var/lib/perftop` (the only writable place the unit leaves).
    pub output: Option<PathBuf>,
    pub interval_s: f64,
    pub retain: Option<String>,
    pub max_size: Option<String>,
    /// `--root` when not `/`.
    pub root: Option<PathBuf>,
    /// `--config` when given.
    pub config: Option<PathBuf>,
}

/// One `ExecStart` word: bare when it holds only plain characters, else double-quoted with
/// `\` and `"` escaped. `%` (a specifier) and `$` (a variable) are doubled either way. A
/// control character (a newline would end the line) or a non-UTF-8 path is refused.
fn exec_word(w: &str) -> Result<String> {
    if w.is_empty() || w.chars().any(char::is_control) {
        bail!("{w:?} cannot go into a unit file (empty or a control character)");
    }
    let plain = w
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._+-:,@=".contains(c));
    let esc = w.replace('%', "%%").replace('$', "$$");
    if plain {
        return Ok(esc);
    }
    Ok(format!(
        "\"{}\"",
        esc.replace('\\', "\\\\").replace('"', "\\\"")
    ))
}

fn path_word(p: &Path, what: &str) -> Result<String> {
    let Some(s) = p.to_str() else {
        bail!(
            "{what} {} is not UTF-8; a unit file cannot name it",
            p.display()
        );
    };
    exec_word(s)
}

/// `/tmp` or `/var/tmp` when `p` lies under one (the unit's `PrivateTmp=yes` hides both).
fn private_tmp(p: &Path) -> Option<&'static str> {
    ["/tmp", "/var/tmp"].into_iter().find(|t| p.starts_with(t))
}

/// The unit text.
pub fn unit(a: &UnitArgs) -> Result<String> {
    if !a.bin.is_absolute() {
        bail!(
            "the perftop binary's path {} is not absolute",
            a.bin.display()
        );
    }
    // PrivateTmp=yes (below) gives the service its own empty /tmp and /var/tmp: a binary,
    // config or root there is not found when the unit starts (status 203/EXEC).
    let paths = [
        ("binary", Some(&a.bin)),
        ("--root", a.root.as_ref()),
        ("--config", a.config.as_ref()),
    ];
    for (what, p) in paths.into_iter().filter_map(|(w, p)| Some((w, p?))) {
        if let Some(tmp) = private_tmp(p) {
            bail!(
                "the {what} {} is under {tmp}, which the unit's PrivateTmp=yes replaces with an \
                 empty directory: the service would not find it; put it elsewhere (the binary in \
                 /usr/local/bin) and print the unit again",
                p.display()
            );
        }
    }
    let state_dir = Path::new(SYSTEM_RECORDING)
        .parent()
        .unwrap_or(Path::new("/var/lib/perftop"));
    let output = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(SYSTEM_RECORDING));
    // ProtectSystem=strict leaves only the state directory writable: a recording anywhere else
    // would fail at the first write, so say it now.
    if output.parent() != Some(state_dir) || output.file_name().is_none() {
        bail!(
            "the service records into its state directory {}: give -o {}/NAME or leave -o out",
            state_dir.display(),
            state_dir.display()
        );
    }
    let retain = a.retain.as_deref().unwrap_or(DEFAULT_RETAIN);
    let max_size = a.max_size.as_deref().unwrap_or(DEFAULT_MAX_SIZE);
    parse_duration(retain)?;
    parse_size(max_size)?;
    let mut exec = format!(
        "{} record -o {} -d {} --retain {} --max-size {}",
        path_word(&a.bin, "binary")?,
        path_word(&output, "-o")?,
        a.interval_s,
        exec_word(retain)?,
        exec_word(max_size)?
    );
    if let Some(r) = &a.root {
        write!(exec, " --root {}", path_word(r, "--root")?)?;
    }
    if let Some(c) = &a.config {
        write!(exec, " --config {}", path_word(c, "--config")?)?;
    }
    let out = output.display();
    Ok(format!(
        r#"# perftop recorder: samples this host every {interval} s into {out}, so a recording is
# already running when an incident starts. Printed by `perftop record --print-unit` (perftop {version}).
#
# Install:  perftop record --print-unit > /etc/systemd/system/perftop.service
#           systemctl daemon-reload
#           systemctl enable --now perftop
# Read it:  perftop replay / perftop dump (no path: this recording, all its segments)
# Config:   /etc/perftop/config.toml (ProtectHome below keeps root's user config out of the
#           picture unless --config names one).

[Unit]
Description=perftop recorder (always-on performance recording)
# Samples are stamped with the wall clock: where a time-sync service is enabled, start after the
# clock is synchronised, so a recording does not open with a clock step.
After=time-sync.target

[Service]
Type=simple
ExecStart={exec}
# /var/lib/perftop, created by systemd: the only place this unit can write (ProtectSystem=strict),
# and where -o points. 0750 and UMask: recordings hold process names and cgroup paths.
StateDirectory={state}
StateDirectoryMode=0750
UMask=0027
# `systemctl stop` sends SIGTERM: the recorder writes a stop marker, syncs and exits 0. Any other
# end (a crash, a full disk) restarts it; every start opens a new segment of the same recording.
Restart=always
RestartSec=10

# It must not compete with the workload it watches: lower CPU priority and a memory bound far
# above its use (peak RSS 6-16 MB measured). I/O stays best-effort (lowest level), not idle: the idle class
# could hold the once-a-minute fdatasync back for as long as an I/O storm lasts - the incident
# the recording is for.
Nice=10
IOSchedulingClass=best-effort
IOSchedulingPriority=7
MemoryMax=256M

# Privileges: root, with every capability dropped but the two reading needs:
#   CAP_DAC_READ_SEARCH  open other users' mode-0400 files (/proc/PID/io)
#   CAP_SYS_PTRACE       pass the ptrace-read check /proc/PID/io makes for other users' processes
# Without them the processes pane loses other users' I/O. The recorder never tweaks anything.
CapabilityBoundingSet=CAP_DAC_READ_SEARCH CAP_SYS_PTRACE
NoNewPrivileges=yes
# Everything read-only but the state directory (and /dev, /proc, /sys, read below).
ProtectSystem=strict
# read-only, not yes: the filesystems pane reports the space of /home; an empty, inaccessible
# /home would hide it.
ProtectHome=read-only
PrivateTmp=yes
PrivateDevices=yes
# /proc/sys, /sys and cgroupfs read-only: the recorder reads them, never writes.
ProtectKernelTunables=yes
ProtectControlGroups=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectClock=yes
ProtectHostname=yes
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
MemoryDenyWriteExecute=yes
# AF_UNIX only: a stop signal wakes the recorder through a socket pair.
RestrictAddressFamilies=AF_UNIX
SystemCallArchitectures=native
# A call outside the usual service set fails with EPERM (perftop reports what it could not read)
# instead of killing the recorder.
SystemCallFilter=@system-service
SystemCallErrorNumber=EPERM
# Left out on purpose: ProtectProc=invisible and ProcSubset=pid would hide other users'
# processes and /proc/meminfo, /proc/stat; PrivateNetwork would show an empty network namespace
# instead of the host's NICs; PrivateUsers would take the two capabilities away.

[Install]
WantedBy=multi-user.target
"#,
        interval = a.interval_s,
        version = env!("CARGO_PKG_VERSION"),
        state = STATE_DIRECTORY,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> UnitArgs {
        UnitArgs {
            bin: PathBuf::from("/usr/local/bin/perftop"),
            output: None,
            interval_s: 1.0,
            retain: None,
            max_size: None,
            root: None,
            config: None,
        }
    }

    #[test]
    fn exec_start_words_are_quoted_for_systemd() {
        assert_eq!(
            exec_word("/usr/bin/perftop").ok().as_deref(),
            Some("/usr/bin/perftop")
        );
        assert_eq!(
            exec_word("/opt/my tools/perf\"top").ok().as_deref(),
            Some("\"/opt/my tools/perf\\\"top\"")
        );
        assert_eq!(exec_word("/a%b$c").ok().as_deref(), Some("\"/a%%b$$c\""));
        assert!(exec_word("/a\nb").is_err());
    }

    #[test]
    fn output_must_stay_in_the_state_directory() {
        let mut a = args();
        a.output = Some(PathBuf::from("/tmp/r.ptrec"));
        assert!(unit(&a).is_err());
        a.output = Some(PathBuf::from("/var/lib/perftop/other.ptrec"));
        let u = unit(&a).expect("unit");
        assert!(
            u.contains("record -o /var/lib/perftop/other.ptrec -d 1 --retain 7d --max-size 1G\n")
        );
        a.bin = PathBuf::from("perftop");
        assert!(unit(&a).is_err(), "a relative binary path");
        let mut a = args();
        a.retain = Some("7 fortnights".into());
        assert!(unit(&a).is_err());
    }

    /// issue 37: PrivateTmp=yes gives the service an empty /tmp and /var/tmp, so a unit for a
    /// binary (or config, or root) there would fail at start; it is refused with the reason.
    #[test]
    fn nothing_the_unit_needs_may_live_in_a_private_tmp() {
        for bin in ["/tmp/perftop", "/var/tmp/build/perftop", "/tmp"] {
            let mut a = args();
            a.bin = PathBuf::from(bin);
            let e = unit(&a).expect_err(bin).to_string();
            assert!(e.contains("PrivateTmp=yes") && e.contains(bin), "{e}");
        }
        let mut a = args();
        a.config = Some(PathBuf::from("/tmp/perftop.toml"));
        assert!(unit(&a).is_err(), "config under /tmp");
        let mut a = args();
        a.root = Some(PathBuf::from("/var/tmp/root"));
        assert!(unit(&a).is_err(), "root under /var/tmp");
        // Only the directories themselves, not names that start alike.
        let mut a = args();
        a.bin = PathBuf::from("/tmpfs/bin/perftop");
        a.config = Some(PathBuf::from("/var/tmpl/perftop.toml"));
        assert!(unit(&a).is_ok());
    }
}
