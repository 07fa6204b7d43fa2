//! `perftop record` as a process: kill -9 mid-record, SIGTERM flushes.

use super::*;

fn record_cmd(dir: &Path, out: &Path, extra: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_perftop"))
        .arg("--root")
        .arg(dir)
        .args(["record", "-d", "0.25", "-o"])
        .arg(out)
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn perftop record")
}

fn wait_for_samples(path: &Path, n: usize) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        if Recording::open(path).is_ok_and(|r| r.len() >= n) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("recorder did not write {n} samples");
}

#[test]
fn kill_9_mid_record_then_dump() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = dir.path().join("host");
    write_host(&host, &small_host(), 0).expect("synth");
    let out = dir.path().join("k.rec");
    let mut child = record_cmd(&host, &out, &[]);
    wait_for_samples(&out, 4);
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let dump = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["dump", "--format", "json"])
        .arg(&out)
        .output()
        .expect("dump");
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    assert!(String::from_utf8_lossy(&dump.stdout).lines().count() >= 3);
    // A restarted recorder starts a new segment.
    let status = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .arg("--root")
        .arg(&host)
        .args(["record", "-d", "0.25", "-n", "2", "-o"])
        .arg(&out)
        .status()
        .expect("record again");
    assert!(status.success());
    assert_eq!(list_segments(&out).len(), 2);
}

#[test]
fn sigterm_flushes_and_closes_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = dir.path().join("host");
    write_host(&host, &small_host(), 0).expect("synth");
    let out = dir.path().join("t.rec");
    let child = record_cmd(&host, &out, &["--duration", "1h"]);
    wait_for_samples(&out, 2);
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).expect("pid")).expect("pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
    let o = child.wait_with_output().expect("wait");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bytes/sample"));
    let rec = Recording::open(&out).expect("open");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert!(
        matches!(rec.events.last().map(|e| &e.kind), Some(EventKind::Gap(g)) if g.reason == "stop")
    );
}
