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

/// ext4 writes a file renamed over another out at once (`auto_da_alloc`): with a plain
/// rename every page was written to the disk, ~8 pages in 2 s at `-d 0.25`. Exchanged and
/// then unlinked, a page's data is dropped unwritten: what the exporter leaves dirty over the
/// window is at most the page alive at either end.
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
    let up = up.is_some();
    std::thread::sleep(Duration::from_millis(500));
    let before = io(child.id());
    let mtime = || std::fs::metadata(&prom).and_then(|m| m.modified()).ok();
    let first = mtime();
    std::thread::sleep(Duration::from_millis(2000));
    let after = io(child.id());
    let replaced = mtime() != first;
    let page = std::fs::metadata(&prom).map_or(0, |m| m.len());
    let _ = child.kill();
    let _ = child.wait();
    assert!(up, "no page within 10 s");
    assert!(replaced, "the page was not replaced in 2 s at -d 0.25");
    let (Some((w0, c0)), Some((w1, c1))) = (before, after) else {
        panic!("/proc/{}/io unreadable", child.id());
    };
    // Whole pages of the page cache: a ~90 KB page dirties 23 of them.
    let page_bytes = page.div_ceil(4096) * 4096;
    let kept = (w1 - w0).saturating_sub(c1 - c0);
    assert!(
        w1 - w0 >= 5 * page_bytes,
        "only {} bytes dirtied in 2 s at -d 0.25 for a {page}-byte page: the test sees no pages",
        w1 - w0
    );
    assert!(
        kept <= 2 * page_bytes,
        "{kept} bytes of {} dirtied were left to reach the disk ({page}-byte page): pages are written out",
        w1 - w0
    );
}
