//! perftop run as `nobody` (issue 43 item 3): `snapshot`/`delta` (the JSON contract), `batch`
//! and `record`/`dump` exit 0, the numbers only root can read are unknown with a reason that
//! says root (never 0), and the rest are filled. The binary is copied to a directory `nobody`
//! can reach; `setpriv` drops every id and group before it runs.

use crate::support;
use crate::support::live;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const T: &str = "perftop_as_nobody_says_what_needs_root";

/// `perftop ARGS` as uid/gid 65534 with no groups, HOME and the XDG dirs in `dir`.
fn as_nobody(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "env"])
        .arg(format!("HOME={}", dir.display()))
        .arg(format!("XDG_CONFIG_HOME={}", dir.display()))
        .arg(format!("XDG_STATE_HOME={}", dir.display()))
        .arg(dir.join("perftop"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("setpriv");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The owner of a process, by the kernel (`Uid:` of /proc/PID/status); `None` once it exited.
fn uid_of(pid: u64) -> Option<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[test]
fn perftop_as_nobody_says_what_needs_root() {
    let _machine = support::machine();
    if !live::ready(T, &["setpriv"]) {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    std::fs::copy(env!("CARGO_BIN_EXE_perftop"), dir.path().join("perftop")).expect("copy");
    let d = dir.path();
    let (a, b) = (d.join("a.json"), d.join("b.json"));
    for (i, p) in [&a, &b].into_iter().enumerate() {
        if i == 1 {
            // An interval long enough for processes to use CPU and do I/O.
            live::sleep_ms(1000);
        }
        let (ok, _, err) = as_nobody(d, &["snapshot", "-o", p.to_str().expect("utf8")]);
        assert!(ok, "snapshot as nobody: {err}");
    }
    let (ok, out, err) = as_nobody(
        d,
        &[
            "delta",
            a.to_str().expect("utf8"),
            b.to_str().expect("utf8"),
        ],
    );
    assert!(ok, "delta as nobody: {err}");
    let j: Value = serde_json::from_str(&out).expect("delta JSON");
    // Root only: other users' /proc/PID/io (pid 1 is root's on every host).
    let why = j["host"]["tasks"]["io_unknown"].as_str().unwrap_or("");
    assert!(why.contains("root"), "io of other users: {why:?}");
    let (mut judged, mut filled) = (0, 0);
    for p in j["processes"].as_array().expect("processes") {
        let Some(uid) = p["pid"].as_u64().and_then(uid_of) else {
            continue;
        };
        if uid != 65534 {
            judged += 1;
            for k in ["read_kb_per_s", "write_kb_per_s"] {
                assert!(
                    p[k].is_null(),
                    "{k} of pid {} (uid {uid}): {}, not unknown",
                    p["pid"],
                    p[k]
                );
            }
        }
        // A process that started between the two snapshots has no CPU share of the interval.
        filled += usize::from(p["cpu_pct"].as_f64().is_some());
    }
    assert!(
        filled > 0,
        "no process with cpu_pct as nobody: {}",
        j["processes"]
    );
    assert!(
        judged > 0,
        "no process of another user listed: {}",
        j["processes"]
    );
    // The kernel log: root only where dmesg_restrict is set (CAP_SYSLOG).
    let restrict = live::read_trim("/proc/sys/kernel/dmesg_restrict").unwrap_or_default();
    let kmsg = j["host"]["kernel_events_unknown"].as_str().unwrap_or("");
    if restrict.trim() == "1" {
        assert!(kmsg.contains("needs root"), "kernel log: {kmsg:?}");
    }
    // RAPL energy: root only since 5.10, where the host has RAPL zones.
    let rapl = Path::new("/sys/class/powercap/intel-rapl:0/energy_uj");
    if rapl.exists() {
        let power = j["power"].to_string();
        assert!(power.contains("root only"), "RAPL as nobody: {power}");
        assert!(
            j["power"]["package_watts"].is_null(),
            "package watts as nobody"
        );
    }
    // What any user can read is filled.
    for path in [
        &["host", "busy_pct"][..],
        &["host", "intr_per_s"],
        &["memory", "mem_total_kb"],
        &["memory", "mem_available_kb"],
        &["interrupts", "intr_per_s"],
    ] {
        let v = path.iter().fold(&j, |v, k| &v[k]);
        assert!(v.as_f64().is_some(), "{path:?} as nobody: {v}");
    }
    assert!(
        j["cpus"]
            .as_array()
            .is_some_and(|c| c.iter().all(|c| c["c0_pct"].is_number())),
        "cpus"
    );
    assert!(
        j["disks"].as_array().is_some_and(|d| !d.is_empty()),
        "disks"
    );
    // batch: the same reasons, in words, and exit 0.
    let (ok, text, err) = as_nobody(d, &["batch", "-n", "2", "-d", "0.5", "--width", "200"]);
    assert!(ok, "batch as nobody: {err}");
    assert!(
        text.contains("root"),
        "batch as nobody says what needs root:\n{text}"
    );
    // record and dump as nobody, into its own directory.
    let rec = d.join("n.ptrec");
    let (ok, _, err) = as_nobody(
        d,
        &[
            "record",
            "-d",
            "0.5",
            "-n",
            "3",
            "-o",
            rec.to_str().expect("utf8"),
        ],
    );
    assert!(ok, "record as nobody: {err}");
    let (ok, out, err) = as_nobody(
        d,
        &["dump", "--format", "json", rec.to_str().expect("utf8")],
    );
    assert!(ok, "dump as nobody: {err}");
    let frames: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(frames.len(), 2, "dump frames as nobody:\n{out}");
    let io = frames[1]["host"]["tasks"]["io_unknown"]
        .as_str()
        .unwrap_or("");
    assert!(io.contains("root"), "recorded io reason: {io:?}");
}
