//! The OOM killer's victim: a process that fills a memory-limited cgroup (v1 here: the
//! memory hierarchy alone, as `cgcreate` and docker on v1 make it) is killed, and perftop's
//! `memory.oom_victims[]`, `kernel_events[]` and `memory.oom_kill` finding name the pid, comm
//! and cgroup the kernel's own log line (`dmesg`) names.

use super::live::{self, Recording, Table};
use super::support;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

const MEMORY_V1: &str = "/sys/fs/cgroup/memory";
const UNIFIED: &str = "/sys/fs/cgroup";

/// A memory cgroup made for the test, removed on every path.
pub(super) struct Group(pub(super) PathBuf);

impl Drop for Group {
    fn drop(&mut self) {
        live::wait_until(Duration::from_secs(5), || {
            std::fs::remove_dir(&self.0).is_ok()
        });
    }
}

/// The memory cgroup's directory and how to cap it: v1's memory hierarchy, else v2's.
pub(super) fn make_group(name: &str) -> Result<(Group, &'static str), String> {
    let (base, limit) = if std::path::Path::new(MEMORY_V1)
        .join("memory.limit_in_bytes")
        .exists()
    {
        (MEMORY_V1, "memory.limit_in_bytes")
    } else if std::path::Path::new(UNIFIED)
        .join("cgroup.controllers")
        .exists()
    {
        (UNIFIED, "memory.max")
    } else {
        return Err("no v1 memory hierarchy and no cgroup2 mount".into());
    };
    let dir = PathBuf::from(base).join(name);
    std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
    let g = Group(dir);
    std::fs::write(g.0.join(limit), "33554432").map_err(|e| format!("{limit}: {e}"))?;
    Ok((g, base))
}

/// The kernel's own lines for a kill of `pid` (`dmesg`, the reference tool): the comm and
/// task_memcg of its `oom-kill:` line.
fn dmesg_victim(pid: u32) -> Option<(String, String)> {
    let out = live::run("dmesg", &[]);
    let line = out
        .lines()
        .rev()
        .find(|l| l.contains("oom-kill:") && l.contains(&format!(",pid={pid},")))?;
    let (rest, _) = line.rsplit_once(&format!(",pid={pid},"))?;
    let (rest, comm) = rest.rsplit_once(",task=")?;
    let (_, memcg) = rest.rsplit_once("task_memcg=")?;
    Some((comm.to_string(), memcg.to_string()))
}

#[test]
fn an_oom_kill_names_the_kernels_victim() {
    let test = "an_oom_kill_names_the_kernels_victim";
    let _machine = crate::support::machine();
    if !live::ready(test, &["dmesg", "tail"]) {
        return;
    }
    let name = format!("perftop-oom-{}", std::process::id());
    let (group, base) = match make_group(&name) {
        Ok(g) => g,
        Err(e) => {
            support::skip(test, &format!("cannot make a memory-limited cgroup: {e}"));
            return;
        }
    };
    let rec = Recording::start(1.0, 5);
    live::sleep_ms(1500);
    // `tail /dev/zero` keeps every byte while it looks for a newline: it fills the 32 MiB
    // limit in milliseconds, and the group's OOM killer kills it (the only task there).
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec tail /dev/zero",
            group.0.display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        support::skip(test, "cannot start tail");
        return;
    };
    let pid = child.id();
    let _ = child.wait();
    let frames = rec.finish();
    let mut t = Table::new("an_oom_kill_names_the_kernels_victim");
    let Some((comm, memcg)) = dmesg_victim(pid) else {
        support::skip(
            test,
            &format!("the kernel logged no OOM kill of pid {pid} (base {base})"),
        );
        return;
    };
    let victims: Vec<&Value> = frames
        .iter()
        .flat_map(|f| f["memory"]["oom_victims"].as_array().into_iter().flatten())
        .filter(|v| v["pid"].as_u64() == Some(u64::from(pid)))
        .collect();
    t.holds(
        "oom_victims[] entries for the pid",
        victims.len().to_string(),
        "1 (once, in the sample it arrived in)".into(),
        victims.len() == 1,
    );
    let v = victims.first().copied().unwrap_or(&Value::Null);
    t.holds(
        "victim comm",
        v["comm"].to_string(),
        comm.clone(),
        v["comm"].as_str() == Some(comm.as_str()),
    );
    t.holds(
        "victim cgroup",
        v["cgroup"].to_string(),
        memcg.clone(),
        v["cgroup"].as_str() == Some(memcg.as_str()) && memcg.ends_with(&name),
    );
    t.holds(
        "victim constraint",
        v["constraint"].to_string(),
        "CONSTRAINT_MEMCG".into(),
        v["constraint"].as_str() == Some("CONSTRAINT_MEMCG"),
    );
    // anon-rss: what it held when killed, about the 32 MiB limit.
    let anon = v["anon_rss_kb"].as_u64().unwrap_or(0);
    t.holds(
        "victim anon_rss_kb",
        anon.to_string(),
        "16 MiB..32 MiB (the limit)".into(),
        (16 * 1024..=32 * 1024).contains(&anon),
    );
    let event = frames
        .iter()
        .flat_map(|f| f["kernel_events"].as_array().into_iter().flatten())
        .find(|e| e["kind"] == "oom_kill" && e["pid"].as_u64() == Some(u64::from(pid)));
    t.holds(
        "kernel_events[] oom_kill",
        event.map_or("none".into(), |e| e["message"].to_string()),
        format!("pid {pid}"),
        event.is_some(),
    );
    let finding = frames
        .iter()
        .flat_map(|f| f["findings"].as_array().into_iter().flatten())
        .find(|f| f["id"] == "memory.oom_kill")
        .and_then(|f| f["message"].as_str().map(str::to_string));
    let want = format!("{comm} (pid {pid}");
    t.holds(
        "memory.oom_kill names the victim",
        format!("{finding:?}"),
        want.clone(),
        finding
            .as_deref()
            .is_some_and(|m| m.contains(&want) && m.contains(&name)),
    );
    drop(group);
    t.finish();
}
