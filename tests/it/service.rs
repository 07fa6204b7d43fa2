//! The always-on recorder: the unit `perftop record --print-unit` prints (checked by
//! `systemd-analyze verify` where installed, and line by line), the system config fallback, and
//! `dump`/`replay` opening the service's recording when given no path.
//!
//! `PERFTOP_SYSTEM_ROOT` stands for `/` when perftop looks for `/etc/perftop` and
//! `/var/lib/perftop`, so nothing here writes outside a temporary directory.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// perftop with a clean environment for config lookup: `HOME` is `home`, no
/// `XDG_CONFIG_HOME`, and `/` for system files is `sys`.
fn perftop(args: &[&str], home: &Path, sys: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env("PERFTOP_SYSTEM_ROOT", sys)
        .output()
        .expect("run perftop")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn print_unit(extra: &[&str]) -> String {
    let t = tempfile::tempdir().expect("tempdir");
    let mut args = vec!["record", "--print-unit"];
    args.extend_from_slice(extra);
    let o = perftop(&args, t.path(), t.path());
    assert!(o.status.success(), "print-unit: {}", text(&o.stderr));
    text(&o.stdout)
}

/// The unit's `Key=value` lines by section (keys that repeat keep every value).
fn settings(unit: &str) -> BTreeMap<(String, String), Vec<String>> {
    let mut out: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut section = String::new();
    for l in unit.lines().map(str::trim) {
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(s) = l.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = s.to_string();
            continue;
        }
        let (k, v) = l
            .split_once('=')
            .unwrap_or_else(|| panic!("not a setting: {l}"));
        out.entry((section.clone(), k.to_string()))
            .or_default()
            .push(v.to_string());
    }
    out
}

fn one<'a>(s: &'a BTreeMap<(String, String), Vec<String>>, sec: &str, key: &str) -> &'a str {
    let v = s
        .get(&(sec.to_string(), key.to_string()))
        .unwrap_or_else(|| panic!("[{sec}] {key}= missing"));
    assert_eq!(v.len(), 1, "[{sec}] {key}= set {} times", v.len());
    &v[0]
}

#[test]
fn unit_runs_this_binary_into_its_state_directory_with_two_capabilities() {
    let unit = print_unit(&[]);
    let s = settings(&unit);
    let exec: Vec<&str> = one(&s, "Service", "ExecStart").split(' ').collect();
    let bin = Path::new(exec[0]);
    assert!(
        bin.is_absolute(),
        "ExecStart binary {bin:?} is not absolute"
    );
    let built = std::fs::canonicalize(env!("CARGO_BIN_EXE_perftop")).expect("canonicalize");
    assert_eq!(
        std::fs::canonicalize(bin).expect("ExecStart binary exists"),
        built
    );
    assert_eq!(
        exec[1..],
        [
            "record",
            "-o",
            "/var/lib/perftop/perftop.ptrec",
            "-d",
            "1",
            "--retain",
            "7d",
            "--max-size",
            "1G"
        ]
    );
    // -o lies directly in the directory systemd creates for StateDirectory= (/var/lib/NAME),
    // the only writable place ProtectSystem=strict leaves.
    let state = one(&s, "Service", "StateDirectory");
    assert_eq!(
        Path::new(exec[3]).parent(),
        Some(PathBuf::from("/var/lib").join(state).as_path())
    );
    assert_eq!(one(&s, "Service", "ProtectSystem"), "strict");
    assert_eq!(one(&s, "Service", "Restart"), "always");
    assert_eq!(one(&s, "Unit", "After"), "time-sync.target");
    let nice: i32 = one(&s, "Service", "Nice").parse().expect("Nice= a number");
    assert!(
        nice > 0,
        "Nice={nice} does not lower the recorder's priority"
    );
    let mut caps: Vec<&str> = one(&s, "Service", "CapabilityBoundingSet")
        .split_whitespace()
        .collect();
    caps.sort_unstable();
    assert_eq!(caps, ["CAP_DAC_READ_SEARCH", "CAP_SYS_PTRACE"]);
    assert_eq!(one(&s, "Service", "NoNewPrivileges"), "yes");
    assert!(one(&s, "Service", "MemoryMax").ends_with('M'));
    assert!(!s.contains_key(&("Service".into(), "ProtectProc".into())));
    assert_eq!(one(&s, "Install", "WantedBy"), "multi-user.target");

    // Options given with --print-unit carry over into ExecStart.
    let s = settings(&print_unit(&[
        "-d",
        "5",
        "--retain",
        "30d",
        "--max-size",
        "200M",
        "-o",
        "/var/lib/perftop/other.ptrec",
    ]));
    assert!(one(&s, "Service", "ExecStart")
        .ends_with(" record -o /var/lib/perftop/other.ptrec -d 5 --retain 30d --max-size 200M"));
}

#[test]
fn unit_refusals_and_record_without_output() {
    let t = tempfile::tempdir().expect("tempdir");
    let run = |args: &[&str]| perftop(args, t.path(), t.path());
    let o = run(&["record", "--print-unit", "-o", "/tmp/elsewhere.ptrec"]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("give -o /var/lib/perftop/NAME"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&["record", "--print-unit", "-n", "5"]);
    assert!(!o.status.success(), "a count makes no sense for a service");
    let o = run(&["record", "--print-unit", "--retain", "forever"]);
    assert!(!o.status.success());
    let o = run(&["record", "-n", "1"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("--output"), "{}", text(&o.stderr));
}

#[test]
fn unit_passes_systemd_analyze_verify() {
    let test = "unit_passes_systemd_analyze_verify";
    let probe = Command::new("systemd-analyze").arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        support::skip(
            test,
            "systemd-analyze is not installed (Debian: apt-get install systemd)",
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perftop.service");
    std::fs::write(&path, print_unit(&[])).expect("write unit");
    // Offline: verify loads the file, checks every setting and that ExecStart is executable;
    // no running systemd is needed. A bad setting is only a warning (exit 0), so the output
    // must not mention the file either.
    let o = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .expect("systemd-analyze");
    let err = text(&o.stderr) + &text(&o.stdout);
    assert!(o.status.success(), "systemd-analyze verify failed:\n{err}");
    let about_unit: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("perftop.service") || l.contains(&*path.to_string_lossy()))
        .collect();
    assert!(
        about_unit.is_empty(),
        "systemd-analyze verify warns:\n{}",
        about_unit.join("\n")
    );

    // The check can fail: a setting systemd does not know is reported.
    let bad = dir.path().join("bad.service");
    std::fs::write(&bad, print_unit(&[]).replace("Nice=10", "Nice=ten")).expect("write");
    let o = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&bad)
        .output()
        .expect("systemd-analyze");
    assert!(
        text(&o.stderr).contains("bad.service"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn system_config_is_read_when_no_user_config_exists() {
    let t = tempfile::tempdir().expect("tempdir");
    let (home, sys) = (t.path().join("home"), t.path().join("sys"));
    let sys_config = sys.join("etc/perftop/config.toml");
    std::fs::create_dir_all(sys_config.parent().expect("parent")).expect("mkdir");
    std::fs::create_dir_all(&home).expect("mkdir");
    // A config every mode rejects (raise_after must be at least 1): an error naming the file
    // proves which file was read.
    std::fs::write(&sys_config, "[findings]\nraise_after = 0\n").expect("write");
    let o = perftop(&["record", "--print-unit"], &home, &sys);
    assert!(!o.status.success(), "the system config was not read");
    assert!(
        text(&o.stderr).contains(&*sys_config.to_string_lossy()),
        "{}",
        text(&o.stderr)
    );

    // A user config wins over the system one (files are not merged).
    let user = home.join(".config/perftop/config.toml");
    std::fs::create_dir_all(user.parent().expect("parent")).expect("mkdir");
    std::fs::write(&user, "theme = \"light\"\n").expect("write");
    let o = perftop(&["record", "--print-unit"], &home, &sys);
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::write(&user, "[findings]\nno_such_rule = 1\n").expect("write");
    let o = perftop(&["record", "--print-unit"], &home, &sys);
    assert!(text(&o.stderr).contains(&*user.to_string_lossy()));

    // --config wins over both. Not under /tmp: a unit naming a config there is refused (its
    // PrivateTmp=yes would hide it from the service).
    let elsewhere = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let explicit = elsewhere.path().join("explicit.toml");
    std::fs::write(&explicit, "").expect("write");
    let o = perftop(
        &[
            "record",
            "--print-unit",
            "--config",
            &explicit.to_string_lossy(),
        ],
        &home,
        &sys,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
}

#[test]
fn dump_and_replay_open_the_system_recording_without_a_path() {
    let t = tempfile::tempdir().expect("tempdir");
    let sys = t.path();
    let rec = sys.join("var/lib/perftop/perftop.ptrec");
    for cmd in ["dump", "replay"] {
        let o = perftop(&[cmd], sys, sys);
        assert!(!o.status.success());
        let want = format!(
            "no recording at {}; is the perftop service running? pass a path",
            rec.display()
        );
        assert!(
            text(&o.stderr).contains(&want),
            "{cmd}: {}",
            text(&o.stderr)
        );
    }
    // Two segments, as two starts of the service leave.
    std::fs::create_dir_all(rec.parent().expect("parent")).expect("mkdir");
    for _ in 0..2 {
        let o = perftop(
            &[
                "record",
                "-o",
                &rec.to_string_lossy(),
                "-d",
                "0.25",
                "-n",
                "3",
            ],
            sys,
            sys,
        );
        assert!(o.status.success(), "record: {}", text(&o.stderr));
    }
    assert!(sys.join("var/lib/perftop/perftop.ptrec.1").is_file());
    let default = perftop(&["dump", "--format", "json"], sys, sys);
    assert!(default.status.success(), "{}", text(&default.stderr));
    let explicit = perftop(
        &["dump", "--format", "json", &rec.to_string_lossy()],
        sys,
        sys,
    );
    assert_eq!(text(&default.stdout), text(&explicit.stdout));
    // 3 samples per segment, the first of each since boot: 2 intervals each.
    assert_eq!(text(&default.stdout).lines().count(), 4);
}
