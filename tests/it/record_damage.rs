//! Recordings with damage that must cost only itself: a header that checksums but does not
//! parse, unreadable segments beside good ones, `record -o` onto a directory.

use perftop::record::format::{decode_head, encode_frame, RecordType, FILE_MAGIC, FRAME_HEADER};
use perftop::record::Recording;
use std::fs;
use std::path::Path;
use std::process::Command;

fn record(out: &Path, n: &str) {
    let root = crate::support::fixture("vm-2cpu/t1");
    let o = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args([
            "--root".as_ref(),
            root.as_os_str(),
            "record".as_ref(),
            "-o".as_ref(),
        ])
        .arg(out)
        .args(["-n", n, "-d", "0.25"])
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn malformed_header_json_keeps_the_samples() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = dir.path().join("r");
    record(&rec, "4");
    let good = Recording::open(&rec).expect("open").len();
    let mut data = fs::read(&rec).expect("read");
    let at = FILE_MAGIC.len();
    let head = decode_head(&data[at..]).expect("header frame");
    assert_eq!(head.kind, RecordType::Header as u8);
    let len = head.len as usize;
    // Same length (offsets unchanged), valid checksum, not JSON.
    let mut payload = vec![b' '; len];
    payload[0] = b'{';
    let mut frame = Vec::new();
    encode_frame(
        &mut frame,
        RecordType::Header,
        head.wall_ms,
        head.mono_ns,
        &payload,
    );
    data.splice(at..at + FRAME_HEADER + len, frame);
    fs::write(&rec, &data).expect("write");
    let r = Recording::open(&rec).expect("a bad header does not reject the segment");
    assert_eq!(r.len(), good);
    assert!(
        r.warnings.iter().any(|w| w.contains("unreadable header")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn unreadable_segments_are_skipped_with_a_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = dir.path().join("r");
    record(&rec, "3");
    record(&rec, "3");
    let good = Recording::open(&rec).expect("open").len();
    fs::create_dir(dir.path().join("r.2")).expect("mkdir");
    std::os::unix::fs::symlink("nowhere", dir.path().join("r.3")).expect("ln");
    fs::write(dir.path().join("r.01"), b"stray").expect("write");
    let r = Recording::open(&rec).expect("open with bad segments");
    assert_eq!(r.len(), good);
    for seg in ["r.2", "r.3"] {
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains(seg) && w.contains("skipped")),
            "{seg}: {:?}",
            r.warnings
        );
    }
    let o = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .arg("dump")
        .arg(&rec)
        .output()
        .expect("dump");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn record_onto_a_directory_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = crate::support::fixture("vm-2cpu/t1");
    let o = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args([
            "--root".as_ref(),
            root.as_os_str(),
            "record".as_ref(),
            "-o".as_ref(),
        ])
        .arg(dir.path())
        .args(["-n", "1"])
        .output()
        .expect("run");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("is a directory"));
    let mut name = dir.path().as_os_str().to_os_string();
    name.push(".1");
    assert!(!Path::new(&name).exists(), "wrote {name:?}");
}

/// Frames of a recording file: (offset, kind, length including the frame header).
fn frames(data: &[u8]) -> Vec<(usize, u8, usize)> {
    let mut out = Vec::new();
    let mut pos = FILE_MAGIC.len();
    while let Some(h) = data.get(pos..).and_then(decode_head) {
        let len = FRAME_HEADER + h.len as usize;
        out.push((pos, h.kind, len));
        pos += len;
    }
    out
}

/// Deltas find their keyframe by its offset in the file it was written in: a copied keyframe
/// and two recordings concatenated (`cat F G`) lose no interval.
#[test]
fn duplicated_keyframe_and_concatenated_files_keep_every_sample() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("f");
    let g = dir.path().join("g");
    record(&f, "12");
    record(&g, "12");
    let (nf, ng) = (
        Recording::open(&f).expect("f").len(),
        Recording::open(&g).expect("g").len(),
    );
    assert_eq!((nf, ng), (12, 12));

    let data = fs::read(&f).expect("read");
    // The first sample record is a keyframe (in format 2 a step that follows nothing).
    let (at, _, len) = *frames(&data)
        .iter()
        .find(|(_, k, _)| [RecordType::Keyframe as u8, RecordType::Step as u8].contains(k))
        .expect("keyframe");
    let mut dup = data[..at + len].to_vec();
    dup.extend_from_slice(&data[at..]);
    let r = Recording::from_bytes("dup", dup).expect("dup");
    assert_eq!(r.len(), nf, "{:?}", r.warnings);

    let mut both = data.clone();
    both.extend_from_slice(&fs::read(&g).expect("read"));
    let r = Recording::from_bytes("cat", both).expect("cat");
    assert_eq!(r.len(), nf + ng, "{:?}", r.warnings);
    let mut dec = perftop::record::Decoder::default();
    for i in 0..r.len() {
        r.decode(i, &mut dec).expect("every sample decodes");
    }
}
