//! The TCP stack against `nstat` (iproute2): a listener with a backlog of 1 that never accepts,
//! flooded with connections, must raise `net.listen_overflow`, and perftop's ListenOverflows,
//! ListenDrops and RetransSegs (the flood's SYNs are retransmitted) summed over its intervals
//! must equal what nstat counts over the same flood.
//!
//! Everything runs in a network namespace of its own (`ip netns add`): the flood, the
//! recorder and nstat see only the namespace's loopback, so the counts are exact (no other
//! test's traffic) and nothing on the host is changed; the guard deletes the namespace.

use super::live::{self, f, Table};
use std::process::{Command, Stdio};

struct Netns(String);

impl Netns {
    fn add() -> Option<Netns> {
        let name = format!("perftop-tcp-{}", std::process::id());
        live::sh(&["ip", "netns", "add", &name]).ok()?;
        let ns = Netns(name);
        live::sh(&["ip", "-n", &ns.0, "link", "set", "lo", "up"]).ok()?;
        Some(ns)
    }

    fn cmd(&self, prog: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0, prog]);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = live::sh(&["ip", "netns", "del", &self.0]);
    }
}

/// Listens with a backlog of 1, never accepts, and opens a non-blocking connection every
/// 10 ms for `secs`; then closes them all (no SYN is retransmitted after that).
const FLOOD: &str = "
import socket, sys, time
l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen(1)
port = l.getsockname()[1]
print(port, flush=True)
socks = []
end = time.time() + float(sys.argv[1])
while time.time() < end:
    s = socket.socket(); s.setblocking(False); s.connect_ex(('127.0.0.1', port))
    socks.append(s); time.sleep(0.01)
for s in socks: s.close()
l.close()
";

/// `nstat -az NAMES`: name → count since the history was reset.
fn nstat(
    ns: &Netns,
    hist: &std::path::Path,
    names: &[&str],
) -> std::collections::BTreeMap<String, f64> {
    let out = ns
        .cmd("nstat")
        .arg("-az")
        .args(names)
        .env("NSTAT_HISTORY", hist)
        .output()
        .expect("nstat");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Some((w.first()?.to_string(), w.get(1)?.parse().ok()?))
        })
        .collect()
}

#[test]
fn listen_overflows_and_retransmits_match_nstat() {
    const T: &str = "listen_overflows_and_retransmits_match_nstat";
    let _machine = crate::support::machine();
    if !live::ready(T, &["ip", "nstat", "python3"]) {
        return;
    }
    let Some(ns) = Netns::add() else {
        crate::support::skip(T, "cannot create a network namespace (ip netns add)");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = dir.path().join("tcp.rec");
    let hist = dir.path().join("nstat.hist");
    // Intervals of 1 s until stopped after the flood: a fixed count (7) ended before a flood
    // that a busy machine started late (20 of 192 overflows recorded beside stress-ng).
    let recorder = ns
        .cmd(env!("CARGO_BIN_EXE_perftop"))
        .args(["record", "-d", "1", "-n", "600", "-o"])
        .arg(&rec)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("perftop record in the namespace");
    // Its first sample before the flood (a cold start on a busy machine takes its time).
    live::sleep_ms(3000);
    let names = [
        "TcpExtListenOverflows",
        "TcpExtListenDrops",
        "TcpRetransSegs",
    ];
    // `-n`: reset the history only; the next `nstat` counts from here.
    let reset = ns
        .cmd("nstat")
        .arg("-n")
        .env("NSTAT_HISTORY", &hist)
        .status()
        .expect("nstat -n");
    assert!(reset.success(), "nstat -n");
    let reset_ms = live::wall_ms();
    let flood = ns
        .cmd("python3")
        .args(["-c", FLOOD, "2.5"])
        .output()
        .expect("flood");
    assert!(flood.status.success(), "flood script");
    let port: Option<u64> = String::from_utf8_lossy(&flood.stdout).trim().parse().ok();
    live::sleep_ms(200);
    let theirs = nstat(&ns, &hist, &names);
    let read_ms = live::wall_ms();
    // One more sample after nstat's read, then SIGTERM: the recorder stops cleanly (a stop
    // marker, exit status 0).
    live::sleep_ms(1500);
    let _ = Command::new("kill")
        .args(["-TERM", &recorder.id().to_string()])
        .status();
    let out = recorder.wait_with_output().expect("perftop record");
    assert!(
        out.status.success(),
        "perftop record: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["dump", "--format", "json"])
        .arg(&rec)
        .output()
        .expect("perftop dump");
    let frames: Vec<serde_json::Value> = String::from_utf8_lossy(&dump.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("dump line"))
        .collect();
    drop(ns);

    let mut t = Table::new(T);
    assert!(frames.len() >= 2, "perftop intervals: {}", frames.len());
    // The recording must span nstat's window (reset to read), or the two count different
    // packets: a recorder that a busy machine started after the flood began is foreign delay.
    let first_start = f(&frames[0], &["host", "wall_ms"]).unwrap_or(f64::MAX)
        - f(&frames[0], &["interval_s"]).unwrap_or(0.0) * 1000.0;
    let last_end = frames
        .last()
        .and_then(|fr| f(fr, &["host", "wall_ms"]))
        .unwrap_or(0.0);
    if first_start > reset_ms as f64 || last_end < read_ms as f64 {
        t.noisy(&format!(
            "the recording ({first_start:.0}..{last_end:.0} ms) did not span nstat's window ({reset_ms}..{read_ms} ms)"
        ));
    }
    // Σ rate × interval is the counter's growth over the recording, which spans the whole
    // flood; nstat counted from before the flood to after it: the same packets, exactly.
    let total = |key: &str| -> Option<f64> {
        frames
            .iter()
            .map(|fr| Some(f(&fr["tcp"], &[key])? * fr["interval_s"].as_f64()?))
            .sum()
    };
    for (ours, name) in [
        ("listen_overflows_per_s", "TcpExtListenOverflows"),
        ("listen_drops_per_s", "TcpExtListenDrops"),
        ("retrans_segs_per_s", "TcpRetransSegs"),
    ] {
        let Some(&n) = theirs.get(name) else {
            t.note(name, "-", "nstat printed no such counter");
            continue;
        };
        t.close(
            &format!("Σ {ours} × interval vs nstat {name}"),
            total(ours),
            n,
            0.5,
        );
    }
    let per_s: Vec<String> = frames
        .iter()
        .map(|fr| {
            f(&fr["tcp"], &["listen_overflows_per_s"]).map_or("-".into(), |v| format!("{v:.0}"))
        })
        .collect();
    t.note("listen_overflows_per_s by interval", &per_s.join(" "), "");
    let overflows = theirs.get("TcpExtListenOverflows").copied().unwrap_or(0.0);
    t.holds(
        "the flood overflowed the accept queue",
        format!("{overflows}"),
        ">= 50".into(),
        overflows >= 50.0,
    );
    let raised = frames.iter().any(|fr| {
        fr["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|x| x["id"] == "net.listen_overflow" && x["severity"] == "crit")
    });
    t.holds(
        "net.listen_overflow (crit) in an interval of the flood",
        raised.to_string(),
        "true".into(),
        raised,
    );
    // The interval that saw overflows read the listeners: the flood's port, its accept queue
    // full. The kernel holds backlog + 1 = 2 connections in a listen(1) socket's queue before
    // it drops (sk_acceptq_is_full: queued > backlog).
    let named: Vec<(u64, u64)> = frames
        .iter()
        .flat_map(|fr| {
            fr["tcp"]["listeners"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|l| Some((l["port"].as_u64()?, l["queue"].as_u64()?)))
        .collect();
    t.holds(
        "the flood's listener named with a full queue (port, queue)",
        format!("{named:?}"),
        format!(
            "contains ({}, 2)",
            port.map_or("-".into(), |p| p.to_string())
        ),
        port.is_some_and(|p| named.contains(&(p, 2))),
    );
    let message = frames
        .iter()
        .flat_map(|fr| fr["findings"].as_array().cloned().unwrap_or_default())
        .find(|x| x["id"] == "net.listen_overflow")
        .and_then(|x| x["message"].as_str().map(str::to_string))
        .unwrap_or_default();
    t.holds(
        "net.listen_overflow names the port",
        message.clone(),
        format!(":{} accept queue 2 full", port.unwrap_or(0)),
        port.is_some_and(|p| message.contains(&format!(":{p} accept queue 2 full"))),
    );
    // lo answers EINVAL for its speed: unknown, and no problem noted.
    let last = frames.last().expect("a frame");
    let lo = super::live::find(&last["nics"], "name", "lo");
    let speed = lo.map(|l| l["link"]["speed_mbps"].clone());
    t.holds(
        "lo speed (EINVAL) is null",
        format!("{speed:?}"),
        "Some(Null)".into(),
        speed == Some(serde_json::Value::Null),
    );
    let noted = last["host"]["problems"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|p| p.to_string().contains("/speed"));
    t.holds(
        "no problem noted for lo/speed",
        noted.to_string(),
        "false".into(),
        !noted,
    );
    t.finish();
}
