//! `perftop export --textfile` keeps its pages off the disk: each is replaced a second later,
//! and writing it out is I/O on a host that may be in an I/O incident.

use super::support;
use std::path::Path;
use std::time::Duration;

/// ext4's magic number (`statfs`'s `f_type`).
const EXT4: i64 = 0xEF53;

/// `write_bytes` and `cancelled_write_bytes` of `/proc/PID/io`: bytes a process dirtied in the
/// page cache, and those dropped unwritten (a file truncated or unlinked first).
fn io(pid: u32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
    };
    Some((field("write_bytes:")?, field("cancelled_write_bytes:")?))
}

// `f_type` is an i64 here and a narrower integer on other targets.
#[allow(clippy::unnecessary_cast)]
fn fs_type(dir: &Path) -> Option<i64> {
    rustix::fs::statfs(dir).ok().map(|s| s.f_type as i64)
}

/// Pages of the page cache a window must see the exporter dirty: five pages replaced.
const PAGES_A_WINDOW: u64 = 5;
/// Windows tried before the test gives its verdict: a foreign `sync` (or writeback forced by
/// another process's dirty data) can write out a page that was about to be dropped, so one
/// window over the bound is tried again. A plain rename leaves every page, in every window.
const WINDOWS: usize = 3;

/// One window of the exporter `pid` writing pages about `page_bytes` long: (bytes dirtied,
/// bytes left to reach the disk), or `None` when five pages took more than 20 s (a machine
/// too busy to judge).
fn window(pid: u32, page_bytes: u64) -> Option<(u64, u64)> {
    let (w0, c0) = io(pid)?;
    let until = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        std::thread::sleep(Duration::from_millis(250));
        let (w1, c1) = io(pid)?;
        if w1 - w0 >= PAGES_A_WINDOW * page_bytes {
            return Some((w1 - w0, (w1 - w0).saturating_sub(c1 - c0)));
        }
        if std::time::Instant::now() > until {
            return None;
        }
    }
}

/// ext4 writes a file renamed over another out at once (`auto_da_alloc`): with a plain
/// rename every page was written to the disk. Exchanged and then unlinked, a page's data is
/// dropped unwritten: what the exporter leaves dirty over a window of five pages is at most
/// the page alive at its end and the one being written.
#[test]
fn textfile_pages_replaced_on_ext4_are_never_written_out() {
    const TEST: &str = "textfile_pages_replaced_on_ext4_are_never_written_out";
    let _machine = support::machine();
    let base = support::target_dir();
    let _ = std::fs::create_dir_all(&base);
    let dir = tempfile::tempdir_in(&base).expect("tempdir");
    if fs_type(dir.path()) != Some(EXT4) {
        support::skip(
            TEST,
            "the target directory is not on ext4, whose rename flush this is about",
        );
        return;
    }
    let (mut child, up) = super::textfile_exporter(dir.path());
    let prom = dir.path().join("perftop.prom");
    // Whole pages of the page cache: a ~90 KB page dirties 23 of them.
    let page_bytes = std::fs::metadata(&prom)
        .map_or(0, |m| m.len())
        .div_ceil(4096)
        * 4096;
    let mut windows = Vec::new();
    while up && windows.len() < WINDOWS {
        let Some((dirtied, kept)) = window(child.id(), page_bytes.max(4096)) else {
            break;
        };
        windows.push((dirtied, kept));
        if kept <= 2 * page_bytes {
            break;
        }
    }
    let pid = child.id();
    let _ = child.kill();
    let _ = child.wait();
    assert!(up, "no page within 10 s");
    let Some(&(dirtied, kept)) = windows.last() else {
        support::skip(
            TEST,
            &format!("/proc/{pid}/io unreadable, or five pages took over 20 s"),
        );
        return;
    };
    if kept > 2 * page_bytes && windows.len() < WINDOWS {
        support::skip(
            TEST,
            "five pages took over 20 s in a window after one over the bound",
        );
        return;
    }
    assert!(
        kept <= 2 * page_bytes,
        "{kept} bytes of {dirtied} dirtied were left to reach the disk ({page_bytes}-byte \
         pages), in each of {WINDOWS} windows {windows:?}: pages are written out"
    );
}
