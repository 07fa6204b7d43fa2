//! Filesystem space against df: a 64 MiB ext4 image perftop has never seen, loop-mounted and
//! filled to ~97%, must show df's size, used and available and raise `fs.full` naming it; the
//! root filesystem must lie between `df -B1 /` before and after the recording, within 1%.
//! And a FUSE mount that never answers must not hold up a single sample.

use super::live::{self, f, sh, Recording, Table};
use super::*;
use serde_json::Value;
use std::path::PathBuf;

/// A loop-mounted ext4 image in /var/tmp, unmounted (and its loop device detached) on drop.
struct SmallFs {
    dir: tempfile::TempDir,
    mnt: PathBuf,
    loopdev: Option<String>,
    mounted: bool,
}

impl SmallFs {
    fn new(mb: u64) -> Result<SmallFs, String> {
        // A short path: the finding's message keeps mount points up to 36 characters whole.
        let dir = tempfile::Builder::new()
            .prefix("perftop-fs-")
            .tempdir_in("/var/tmp")
            .map_err(|e| format!("tempdir in /var/tmp: {e}"))?;
        let mut g = SmallFs {
            mnt: dir.path().join("m"),
            dir,
            loopdev: None,
            mounted: false,
        };
        let img = g.dir.path().join("fs.img").to_string_lossy().into_owned();
        sh(&["truncate", "-s", &format!("{mb}M"), &img])?;
        // The default 5% root reserve stays: used + avail < size, as on a real ext4, so the
        // check sees df's "used" (size − f_bfree), not size − avail.
        sh(&["mkfs.ext4", "-q", "-F", &img])?;
        g.loopdev = Some(sh(&["losetup", "-f", "--show", &img])?);
        std::fs::create_dir(&g.mnt).map_err(|e| e.to_string())?;
        sh(&["mount", g.loopdev.as_deref().unwrap_or("?"), &g.path()])?;
        g.mounted = true;
        Ok(g)
    }

    fn path(&self) -> String {
        self.mnt.to_string_lossy().into_owned()
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        if self.mounted {
            let _ = sh(&["umount", &self.path()]);
        }
        if let Some(dev) = self.loopdev.take() {
            let _ = sh(&["losetup", "-d", &dev]);
        }
    }
}

/// `df -B1 --output=size,used,avail,pcent MOUNT`: bytes, and Use% (rounded up by df).
fn df(mount: &str) -> Option<[f64; 4]> {
    let out = sh(&["df", "-B1", "--output=size,used,avail,pcent", mount]).ok()?;
    let line = out.lines().nth(1)?;
    let v: Vec<f64> = line
        .split_whitespace()
        .filter_map(|x| x.trim_end_matches('%').parse().ok())
        .collect();
    v.try_into().ok()
}

fn row<'a>(frame: &'a Value, mount: &str) -> Option<&'a Value> {
    frame["filesystems"]
        .as_array()?
        .iter()
        .find(|m| m["mount"] == mount)
}

/// perftop's figures for `mount` against df's, read just after the recording ended: equal
/// within one block (nothing writes to the filesystem).
fn compare(t: &mut Table, frame: &Value, mount: &str, block: f64) {
    let Some(m) = row(frame, mount) else {
        t.holds(
            &format!("{mount} listed"),
            "absent".into(),
            "mounted".into(),
            false,
        );
        return;
    };
    let Some([size, used, avail, pcent]) = df(mount) else {
        t.holds(
            &format!("df {mount}"),
            "-".into(),
            "unreadable".into(),
            false,
        );
        return;
    };
    let get = |key: &str| f(m, &[key]);
    t.close(&format!("{mount} size B"), get("size_bytes"), size, block);
    t.close(&format!("{mount} used B"), get("used_bytes"), used, block);
    t.close(
        &format!("{mount} avail B"),
        get("avail_bytes"),
        avail,
        block,
    );
    // df rounds Use% up; ours is not rounded: within (df − 1, df].
    let pct = get("used_pct");
    t.bracket(&format!("{mount} used %"), pct, pcent - 1.0, pcent, 0.0);
}

#[test]
fn filesystem_space_matches_df_and_full_is_found() {
    let test = "filesystem_space_matches_df_and_full_is_found";
    let _machine = support::machine();
    if !live::ready(test, &["df", "mkfs.ext4", "losetup", "fallocate"]) {
        return;
    }
    let fs = match SmallFs::new(64) {
        Ok(fs) => fs,
        Err(e) => {
            support::skip(test, &format!("cannot mount a 64 MiB ext4 image: {e}"));
            return;
        }
    };
    let mount = fs.path();
    let Some([_, used, avail, _]) = df(&mount) else {
        support::skip(test, "df cannot read the new filesystem");
        return;
    };
    // Fill to 97% of what writers can use (used + avail, as df's Use%).
    let fill = (avail - 0.03 * (used + avail)).max(0.0) as u64;
    let file = fs.mnt.join("fill").to_string_lossy().into_owned();
    sh(&["fallocate", "-l", &fill.to_string(), &file]).expect("fallocate");
    sh(&["sync", "-f", &file]).expect("sync");

    // `/` moves with every build on this host: perftop's read (the thread's last, up to 5 s
    // before the last sample) lies between df before the recording and df after it.
    let root_before = df("/");
    let frames = Recording::start(1.0, 3).finish();
    let mut t = Table::new("filesystems");
    let Some(last) = frames.last() else {
        t.holds("intervals", "0".into(), "2".into(), false);
        t.finish();
        return;
    };
    // The image: nothing writes to it, so its figures match df's to the byte; allow one block.
    let block = sh(&["stat", "-f", "-c", "%S", &mount])
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(4096.0);
    compare(&mut t, last, &mount, block);
    let pct = row(last, &mount).and_then(|m| f(m, &["used_pct"]));
    t.bracket("small fs used % (filled to 97)", pct, 96.0, 98.0, 0.0);
    let full = last["findings"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["id"] == "fs.full"))
        .and_then(|x| x["message"].as_str())
        .unwrap_or("")
        .to_string();
    t.holds(
        "fs.full names the mount",
        full.clone(),
        format!("{mount}: ...% used"),
        full.starts_with(&format!("{mount}: ")),
    );
    match (root_before, df("/"), row(last, "/")) {
        (Some(a), Some(b), Some(m)) => {
            t.close("/ size B", f(m, &["size_bytes"]), b[0], 0.0);
            for (i, key) in [(1, "used_bytes"), (2, "avail_bytes")] {
                let v = f(m, &[key]);
                let tol = a[i].max(b[i]) * 0.01;
                t.bracket(&format!("/ {key}"), v, a[i], b[i], tol);
            }
            let pct = f(m, &["used_pct"]);
            t.bracket("/ used %", pct, a[3].min(b[3]) - 1.0, a[3].max(b[3]), 1.0);
        }
        _ => t.holds("/ listed and read by df", "-".into(), "both".into(), false),
    }
    t.finish();
}

/// A FUSE mount whose daemon never answers: `/dev/fuse` opened and held by a Python process
/// that mounts it and then sleeps, so every `statfs` on it waits (the kernel holds requests
/// until the daemon answers INIT). Drop kills the holder, which aborts the connection and wakes
/// every waiter with ENOTCONN, then lazily unmounts.
struct HungMount {
    _dir: tempfile::TempDir,
    mnt: PathBuf,
    holder: Option<std::process::Child>,
}

impl HungMount {
    fn new() -> Result<HungMount, String> {
        let dir = tempfile::Builder::new()
            .prefix("perftop-hang-")
            .tempdir_in("/var/tmp")
            .map_err(|e| format!("tempdir in /var/tmp: {e}"))?;
        let mnt = dir.path().join("m");
        std::fs::create_dir(&mnt).map_err(|e| e.to_string())?;
        // `mount -i`: no mount.fuse helper, which would want a real daemon.
        let script = "import os, subprocess, sys, time\n\
            fd = os.open('/dev/fuse', os.O_RDWR)\n\
            subprocess.run(['mount', '-i', '-t', 'fuse', '-o',\n\
                f'fd={fd},rootmode=40000,user_id=0,group_id=0', 'perftop-hang', sys.argv[1]],\n\
                pass_fds=(fd,), check=True)\n\
            print('mounted', flush=True)\n\
            time.sleep(600)\n";
        let mut holder = std::process::Command::new("python3")
            .arg("-c")
            .arg(script)
            .arg(&mnt)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("python3: {e}"))?;
        let mut line = String::new();
        if let Some(out) = holder.stdout.take() {
            use std::io::BufRead;
            let _ = std::io::BufReader::new(out).read_line(&mut line);
        }
        let g = HungMount {
            _dir: dir,
            mnt,
            holder: Some(holder),
        };
        if line.trim() != "mounted" {
            return Err("the FUSE mount did not come up".into());
        }
        Ok(g)
    }
}

impl Drop for HungMount {
    fn drop(&mut self) {
        if let Some(mut h) = self.holder.take() {
            let _ = h.kill();
            let _ = h.wait();
        }
        let _ = sh(&["umount", "-l", &self.mnt.to_string_lossy()]);
    }
}

/// A mount that never answers `statfs` (the reason the sysinfo reads have a thread): samples
/// keep their 1 s cadence, and once the first read is three periods (15 s) late the intervals
/// say the filesystems are unknown because a mount is not answering.
#[test]
fn a_hung_mount_does_not_block_samples() {
    let test = "a_hung_mount_does_not_block_samples";
    let _machine = support::machine();
    if !live::ready(test, &["python3", "mount"]) {
        return;
    }
    if !std::path::Path::new("/dev/fuse").exists() {
        support::skip(test, "no /dev/fuse");
        return;
    }
    let hung = match HungMount::new() {
        Ok(h) => h,
        Err(e) => {
            support::skip(test, &format!("cannot mount a FUSE filesystem: {e}"));
            return;
        }
    };
    let started = std::time::Instant::now();
    let frames = Recording::start(1.0, 19).finish();
    let took = started.elapsed().as_secs_f64();
    drop(hung);
    let mut t = Table::new("hung_mount");
    t.close("intervals recorded", Some(frames.len() as f64), 18.0, 0.0);
    let secs: Vec<f64> = frames
        .iter()
        .filter_map(|fr| f(fr, &["interval_s"]))
        .collect();
    // The first sample waits FIRST_WAIT (0.5 s) for a first read that never comes, so the
    // first interval is up to 1.5 s (measured 1.51); no later sample waits at all.
    let first = secs.first().copied();
    t.bracket("first interval s", first, 0.9, 1.5, 0.3);
    let later = secs.iter().skip(1).copied().fold(0.0, f64::max);
    t.bracket("longest later interval s", Some(later), 0.9, 1.0, 0.3);
    // Start and exit included: a busy machine adds seconds (22.3 s beside stress-ng and four
    // builds, every interval within bounds); a sample or the exit stuck on the mount would not
    // end at all.
    t.bracket("recording took s", Some(took), 17.0, 30.0, 0.0);
    let Some(last) = frames.last() else {
        t.finish();
        return;
    };
    let why = last["host"]["filesystems_unknown"]
        .as_str()
        .unwrap_or("")
        .to_string();
    t.holds(
        "last interval says why",
        why.clone(),
        "filesystems: no answer for N s since perftop started (a mount is not answering)".into(),
        why.contains("since perftop started (a mount is not answering)"),
    );
    let listed = last["filesystems"].as_array().map_or(0, Vec::len);
    t.close("filesystems listed", Some(listed as f64), 0.0, 0.0);
    t.finish();
}
