//! `perftop export --textfile` against a hostile local user: links planted where the exporter
//! writes, and directories another user can write.

use super::{support, wait_for};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

/// Item 5 of issue 37, the textfile part: a link planted at the temp file name an exporter
/// used to write (`.perftop.prom.PID.tmp`), and at `perftop.prom`, pointing at a decoy: the
/// decoy is never written, the page still is.
#[test]
fn links_planted_in_the_textfile_dir_are_not_followed() {
    let _machine = support::machine();
    let dir = tempfile::tempdir().expect("tempdir");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let decoy = elsewhere.path().join("decoy");
    std::fs::write(&decoy, "decoy\n").expect("decoy");
    let (mut child, up) = super::textfile_exporter(dir.path());
    let prom = dir.path().join("perftop.prom");
    let page = || std::fs::read_to_string(&prom).is_ok_and(|t| t.contains("perftop_read_problems"));
    // Planted after the start (whose clean-up removes old temp files), as a local user who
    // read the pid from `ps` would: retried while the exporter's own temp file holds the name.
    let tmp = dir.path().join(format!(".perftop.prom.{}.tmp", child.id()));
    let planted = wait_for(5.0, || std::os::unix::fs::symlink(&decoy, &tmp).is_ok());
    // Four intervals later the exporter has written its page four times.
    std::thread::sleep(Duration::from_millis(1000));
    let decoy_after_tmp = std::fs::read_to_string(&decoy).unwrap_or_default();
    // A link named perftop.prom is replaced by the next page, not written through.
    let _ = std::fs::remove_file(&prom);
    let _ = std::os::unix::fs::symlink(&decoy, &prom);
    std::thread::sleep(Duration::from_millis(1000));
    let replaced = std::fs::symlink_metadata(&prom).is_ok_and(|m| m.file_type().is_file());
    let still_written = page();
    let _ = child.kill();
    let _ = child.wait();
    assert!(up, "no page within 10 s");
    assert!(planted, "could not plant {}", tmp.display());
    let head = |t: &str| t.chars().take(60).collect::<String>();
    assert!(
        decoy_after_tmp == "decoy\n",
        "written through the temp-name link: the decoy now starts {:?}",
        head(&decoy_after_tmp)
    );
    let decoy_now = std::fs::read_to_string(&decoy).expect("decoy");
    assert!(
        decoy_now == "decoy\n",
        "written through perftop.prom: the decoy now starts {:?}",
        head(&decoy_now)
    );
    assert!(replaced, "perftop.prom is still the planted link");
    assert!(still_written, "the page is still written");
}

/// The page is 0644 whatever perftop's umask: node_exporter does not run as root, and a page
/// it cannot read is a silent gap in the fleet's data.
#[test]
fn the_page_is_readable_by_the_collector_whatever_the_umask() {
    let _machine = support::machine();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = std::process::Command::new("sh")
        .args(["-c", "umask 077; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_perftop"))
        .args(["export", "--textfile"])
        .arg(dir.path())
        .args(["-d", "0.25"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start perftop export under umask 077");
    let prom = dir.path().join("perftop.prom");
    let up = wait_for(10.0, || {
        std::fs::read_to_string(&prom).is_ok_and(|t| t.contains("perftop_read_problems"))
    });
    let mode = std::fs::metadata(&prom).map(|m| m.permissions().mode() & 0o777);
    let _ = child.kill();
    let _ = child.wait();
    assert!(up, "no page within 10 s");
    assert_eq!(mode.ok(), Some(0o644), "page mode (octal 644 = 420)");
}

/// `perftop export --textfile DIR -n 1`: whether it ran, and its stderr.
fn export_once(dir: &Path) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["export", "--textfile"])
        .arg(dir)
        .args(["-d", "0.25", "-n", "1"])
        .output()
        .expect("run");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A `--textfile` directory others can write (not sticky), one inside such a directory, or one
/// owned by another user, is refused with the reason, as ssh's StrictModes does; a sticky one
/// like `/tmp` is not.
#[test]
fn a_textfile_dir_another_user_can_write_is_refused() {
    let _machine = support::machine();
    const T: &str = "a_textfile_dir_another_user_can_write_is_refused";
    let base = tempfile::tempdir().expect("tempdir");
    let open = base.path().join("open");
    std::fs::create_dir(&open).expect("mkdir");
    chmod(&open, 0o777);
    let (ok, err) = export_once(&open);
    assert!(!ok, "a 0777 directory was used");
    assert!(err.contains("writable by group or others"), "{err}");
    // A directory of its own inside one others can write is no better: they can rename it.
    let inner = open.join("inner");
    std::fs::create_dir(&inner).expect("mkdir");
    chmod(&inner, 0o755);
    let (ok, err) = export_once(&inner);
    assert!(!ok, "a directory inside a 0777 one was used");
    assert!(
        err.contains(&format!(
            "{} is writable by group or others",
            open.canonicalize().expect("canonical").display()
        )),
        "{err}"
    );
    let sticky = base.path().join("sticky");
    std::fs::create_dir(&sticky).expect("mkdir");
    chmod(&sticky, 0o1777);
    let (ok, err) = export_once(&sticky);
    assert!(ok, "a sticky 1777 directory was refused: {err}");
    if !support::is_root() {
        support::skip(T, "the directory owned by nobody needs root to chown");
        return;
    }
    let theirs = base.path().join("nobody");
    std::fs::create_dir(&theirs).expect("mkdir");
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).expect("chown nobody");
    for mode in [0o777, 0o755] {
        chmod(&theirs, mode);
        let (ok, err) = export_once(&theirs);
        assert!(!ok, "a {mode:o} directory owned by nobody was used");
        assert!(err.contains("owned by uid 65534"), "{mode:o}: {err}");
        assert_eq!(
            std::fs::read_dir(&theirs).expect("list").count(),
            0,
            "{mode:o}: wrote into it"
        );
    }
}
