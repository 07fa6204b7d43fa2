//! cgroup v1: a group made in the memory hierarchy alone (as `cgcreate -g memory:/x` and
//! docker on v1 make them) has its processes matched by their memory controller's path, so
//! `cgroup.memory_high` names the process that holds the memory. Before, processes were
//! matched by their `name=systemd` path only, and such a group's findings named nobody.

use super::live::{self, Recording, Table};
use super::support;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const MEMORY: &str = "/sys/fs/cgroup/memory";

/// The group and its holder: the holder killed and the group removed on every path.
struct Held {
    dir: PathBuf,
    child: Option<Child>,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
        live::wait_until(Duration::from_secs(5), || {
            std::fs::remove_dir(&self.dir).is_ok()
        });
    }
}

fn num(p: &std::path::Path) -> u64 {
    live::read_trim(p).and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[test]
fn a_memory_only_v1_group_names_its_processes() {
    let test = "a_memory_only_v1_group_names_its_processes";
    let _machine = crate::support::machine();
    if !live::ready(test, &["perl"]) {
        return;
    }
    if !std::path::Path::new(MEMORY)
        .join("memory.limit_in_bytes")
        .exists()
    {
        support::skip(
            test,
            "no cgroup v1 memory hierarchy (v2 matches by its one path)",
        );
        return;
    }
    let name = format!("perftop-v1mem-{}", std::process::id());
    let dir = PathBuf::from(MEMORY).join(&name);
    if let Err(e) = std::fs::create_dir(&dir) {
        support::skip(test, &format!("mkdir {}: {e}", dir.display()));
        return;
    }
    let mut held = Held {
        dir: dir.clone(),
        child: None,
    };
    // 48 MiB touched and held, busy on a CPU so that every sample keeps it (an idle process
    // is kept only among the host's 3 largest, which this shared VM's compilers are); then
    // the limit is set so the group sits at 95% of it.
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec perl -e '$x = \"x\" x (48 << 20); 1 while 1'",
            dir.display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start perl");
    let pid = child.id();
    held.child = Some(child);
    let usage = dir.join("memory.usage_in_bytes");
    assert!(
        live::wait_until(Duration::from_secs(10), || num(&usage) > 48 << 20),
        "the holder never charged 48 MiB"
    );
    live::sleep_ms(300);
    let limit = (num(&usage) as f64 / 0.95) as u64 / 4096 * 4096;
    live::write_file(
        &dir.join("memory.limit_in_bytes").display().to_string(),
        &limit.to_string(),
    );
    // The kernel's own record of where the holder is: its memory line differs from its
    // name=systemd line.
    let cg = live::read_trim(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    let memory_path = cg
        .lines()
        .find_map(|l| {
            let mut p = l.splitn(3, ':');
            let (_, c, path) = (p.next()?, p.next()?, p.next()?);
            c.split(',')
                .any(|x| x == "memory")
                .then(|| path.to_string())
        })
        .unwrap_or_default();
    let frames = Recording::start(1.0, 4).finish();
    let mut t = Table::new("a_memory_only_v1_group_names_its_processes");
    t.holds(
        "kernel: memory controller path",
        memory_path.clone(),
        format!("/{name}"),
        memory_path == format!("/{name}"),
    );
    let last = frames.last().cloned().unwrap_or(Value::Null);
    let row = last["processes"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["pid"].as_u64() == Some(u64::from(pid))))
        .cloned()
        .unwrap_or(Value::Null);
    t.holds(
        "processes[] memory_cgroup",
        row["memory_cgroup"].to_string(),
        memory_path.clone(),
        row["memory_cgroup"].as_str() == Some(memory_path.as_str()),
    );
    for (i, fr) in frames.iter().enumerate() {
        let f = fr["findings"]
            .as_array()
            .and_then(|a| a.iter().find(|f| f["id"] == "cgroup.memory_high"));
        let named = f
            .and_then(|f| f["culprits"].as_array())
            .is_some_and(|c| c.iter().any(|c| c["pid"].as_u64() == Some(u64::from(pid))));
        t.holds(
            &format!("[{i}] cgroup.memory_high names the holder"),
            f.map_or("no finding".into(), |f| f["culprits"].to_string()),
            format!("perl {pid}"),
            named,
        );
    }
    drop(held);
    t.finish();
}
