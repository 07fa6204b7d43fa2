//! What is stuck: a `dd` writing to a frozen filesystem waits in D (in `sb_start_write`,
//! `percpu_rwsem_wait` on 6.x) until the filesystem is thawed. perftop shows it in D with the
//! kernel's own `/proc/PID/wchan`, and `proc.blocked` names it.

use super::live::{self, Recording, Table};
use super::support;
use serde_json::Value;
use std::time::Duration;

fn state_of(pid: u32) -> Option<char> {
    let stat = live::read_trim(format!("/proc/{pid}/stat"))?;
    stat.rsplit_once(") ")?.1.chars().next()
}

#[test]
fn a_dd_on_a_frozen_fs_is_blocked_with_its_wchan() {
    let test = "a_dd_on_a_frozen_fs_is_blocked_with_its_wchan";
    let _machine = crate::support::machine();
    if !live::ready(test, &["dd", "mkfs.ext4", "fsfreeze", "losetup"]) {
        return;
    }
    // The guard thaws the filesystem, reaps dd and removes everything on every path.
    let mut disk = match super::frozen::FrozenDisk::new(16, false) {
        Ok(d) => d,
        Err(e) => {
            support::skip(test, &format!("cannot build a loop-mounted ext4: {e}"));
            return;
        }
    };
    disk.freeze().expect("fsfreeze");
    let target = disk.dir.path().join("outer").join("blocked");
    let dd = std::process::Command::new("dd")
        .arg("if=/dev/zero")
        .arg(format!("of={}", target.display()))
        .args(["bs=4k", "count=1", "status=none"])
        .spawn()
        .expect("start dd");
    let pid = dd.id();
    disk.writers.push(dd);
    if !live::wait_until(Duration::from_secs(5), || state_of(pid) == Some('D')) {
        support::skip(test, "dd on a frozen ext4 did not enter D");
        return;
    }
    // D is seen a moment before the wait is recorded: the kernel reads wchan "0" for a task
    // still on its way into the wait. Judge from when it names one wait twice, 200 ms apart.
    let wchan = || live::read_trim(format!("/proc/{pid}/wchan")).unwrap_or_default();
    live::wait_until(Duration::from_secs(5), || {
        let w = wchan();
        if w.is_empty() || w == "0" {
            return false;
        }
        live::sleep_ms(200);
        wchan() == w
    });
    let wchan_before = wchan();
    let frames = Recording::start(1.0, 5).finish();
    let wchan_after = live::read_trim(format!("/proc/{pid}/wchan")).unwrap_or_default();
    let mut t = Table::new("a_dd_on_a_frozen_fs_is_blocked_with_its_wchan");
    let steady = !wchan_before.is_empty() && wchan_before != "0" && wchan_before == wchan_after;
    if steady {
        t.holds(
            "kernel: dd wchan before = after",
            wchan_before.clone(),
            wchan_after.clone(),
            true,
        );
    } else {
        // dd moved between waits while it recorded (beside stress-ng: from the freeze's
        // percpu_rwsem_wait to folio_wait_bit_common): no one wchan to judge perftop's by.
        t.noisy(&format!(
            "dd's wchan moved from {wchan_before:?} to {wchan_after:?} by the kernel's reads"
        ));
    }
    let last = frames.last().cloned().unwrap_or(Value::Null);
    let row = last["processes"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["pid"].as_u64() == Some(u64::from(pid))));
    let row = row.cloned().unwrap_or(Value::Null);
    t.holds(
        "dd state",
        row["state"].to_string(),
        "D".into(),
        row["state"] == "D",
    );
    t.holds(
        "dd wchan",
        row["wchan"].to_string(),
        wchan_before.clone(),
        row["wchan"].as_str() == Some(wchan_before.as_str()),
    );
    // Recorded for 4 s after it entered D: in D on every pass since.
    let blocked = row["blocked_s"].as_f64().unwrap_or(0.0);
    t.holds(
        "dd blocked_s",
        format!("{blocked:.1}"),
        ">= 3 (in D before the 4 s window)".into(),
        blocked >= 3.0,
    );
    let finding = last["findings"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["id"] == "proc.blocked"))
        .cloned()
        .unwrap_or(Value::Null);
    let msg = finding["message"].as_str().unwrap_or("").to_string();
    let want = format!("dd (wchan {wchan_before})");
    t.holds(
        "proc.blocked names dd and its wchan",
        msg.clone(),
        want.clone(),
        msg.contains(&want),
    );
    let culprit = finding["culprits"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["pid"].as_u64() == Some(u64::from(pid))));
    t.holds(
        "proc.blocked culprit pid",
        culprit.map_or("none".into(), |c| c["pid"].to_string()),
        pid.to_string(),
        culprit.is_some(),
    );
    drop(disk);
    t.finish();
}
