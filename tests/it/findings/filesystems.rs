//! `fs.full`: percent, free-space, inode and crit boundaries, each just at and just under its
//! threshold, computed by hand from the raw `statvfs` figures a sample holds.

use super::*;
use perftop::sample::{Filesystem, Filesystems, ReadAt};

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

/// One writable filesystem at `mount`: `size`, `free` (f_bfree) and `avail` (f_bavail) bytes.
fn fs(mount: &str, size: u64, free: u64, avail: u64) -> Filesystem {
    Filesystem {
        mount: mount.into(),
        device: format!("/dev/{}", mount.trim_start_matches('/')),
        fstype: "ext4".into(),
        size_bytes: size,
        free_bytes: free,
        avail_bytes: avail,
        ..Filesystem::default()
    }
}

fn with(mounts: Vec<Filesystem>) -> Pair {
    let mut p = Pair::quiet(1.0);
    p.b.filesystems = Some(Filesystems {
        at: ReadAt::default(),
        mounts,
    });
    p
}

#[test]
fn percent_used_warns_at_95_and_is_crit_at_99() {
    // 950 of 1000 MiB used, none reserved: 950 / (950 + 50) = 95.0%.
    let p = with(vec![fs("/data", 1000 * MIB, 50 * MIB, 50 * MIB)]);
    let f = p.fires("fs.full");
    assert_eq!((f.severity.as_str(), f.pane.as_str()), ("warn", "disks"));
    assert_eq!(f.message, "/data: 95.0% used, 50M free of 1000M");
    assert_eq!(f.tweak, None);
    // 949 used: 94.9%.
    with(vec![fs("/data", 1000 * MIB, 51 * MIB, 51 * MIB)]).silent("fs.full");
    // 990 used: 99.0%, crit; 989 used: 98.9%, warn.
    let p = with(vec![fs("/data", 1000 * MIB, 10 * MIB, 10 * MIB)]);
    assert_eq!(p.fires("fs.full").severity, "crit");
    let p = with(vec![fs("/data", 1000 * MIB, 11 * MIB, 11 * MIB)]);
    assert_eq!(p.fires("fs.full").severity, "warn");
}

#[test]
fn root_reserve_is_no_room_for_writers() {
    // ext4's reserve: 900 used, 100 free of which 50 reserved for root: 900 / 950 = 94.7%.
    with(vec![fs("/", 1000 * MIB, 100 * MIB, 50 * MIB)]).silent("fs.full");
    // 45 available: 900 / 945 = 95.2%, though size − free is only 90% of the size.
    let p = with(vec![fs("/", 1000 * MIB, 100 * MIB, 45 * MIB)]);
    assert_eq!(
        p.fires("fs.full").message,
        "/: 95.2% used, 45M free of 1000M"
    );
    // Nothing left for unprivileged writers: crit, whatever root still has.
    let p = with(vec![fs("/", 1000 * MIB, 100 * MIB, 0)]);
    let f = p.fires("fs.full");
    assert_eq!(
        (f.severity.as_str(), f.message.as_str()),
        ("crit", "/: 100.0% used, 0K free of 1000M")
    );
}

#[test]
fn under_a_gib_free_warns_on_filesystems_of_10_gib_and_more() {
    // 10 GiB with 1023 MiB free: 90.0% used, under the 95% leg, under 1 GiB free.
    let p = with(vec![fs("/var", 10 * GIB, 1023 * MIB, 1023 * MIB)]);
    let f = p.fires("fs.full");
    assert_eq!(f.severity, "warn");
    assert_eq!(f.message, "/var: 90.0% used, 1023M free of 10G");
    // Exactly 1 GiB free: not under it.
    with(vec![fs("/var", 10 * GIB, GIB, GIB)]).silent("fs.full");
    // 1 MiB short of 10 GiB: the free-space leg does not apply (1 GiB is over a tenth).
    with(vec![fs("/var", 10 * GIB - MIB, 1000 * MIB, 1000 * MIB)]).silent("fs.full");
    // A 2 GiB /boot half empty is not full.
    with(vec![fs("/boot", 2 * GIB, GIB, GIB)]).silent("fs.full");
}

#[test]
fn read_only_and_tiny_filesystems_are_left_out() {
    let mut ro = fs("/snap/core", 1000 * MIB, 0, 0);
    ro.read_only = true;
    with(vec![ro]).silent("fs.full");
    // 31 MiB, completely full: under the 32 MiB floor. 32 MiB full: crit.
    with(vec![fs("/boot/efi", 31 * MIB, 0, 0)]).silent("fs.full");
    let p = with(vec![fs("/boot/efi", 32 * MIB, 0, 0)]);
    assert_eq!(p.fires("fs.full").severity, "crit");
}

#[test]
fn inodes_fill_a_filesystem_too() {
    let mut f = fs("/mail", 1000 * MIB, 500 * MIB, 500 * MIB);
    f.inodes = Some(1000);
    f.inodes_free = Some(50);
    let p = with(vec![f.clone()]);
    assert_eq!(p.fires("fs.full").message, "/mail: 95.0% of inodes used");
    f.inodes_free = Some(51);
    with(vec![f]).silent("fs.full");
}

#[test]
fn the_fullest_is_named_and_the_rest_counted() {
    let p = with(vec![
        fs("/a", 1000 * MIB, 40 * MIB, 40 * MIB),
        fs("/b", 1000 * MIB, 5 * MIB, 5 * MIB),
        fs("/c", 1000 * MIB, 500 * MIB, 500 * MIB),
    ]);
    let f = p.fires("fs.full");
    assert_eq!(f.severity, "crit");
    assert_eq!(f.message, "/b: 99.5% used, 5.0M free of 1000M (+1 more)");
    // A fixture root or an old recording: no filesystems, no finding.
    Pair::quiet(1.0).silent("fs.full");
}
