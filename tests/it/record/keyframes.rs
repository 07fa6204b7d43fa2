//! Format 3's keyframes: their skeleton compressed against the built-in one
//! (`record::format::KEYFRAME_SKELETON`), which every format-3 recording needs to decode.

use super::*;
use perftop::record::format::{decode_head, RecordType, FILE_MAGIC, KEYFRAME_SKELETON};

/// Every format-3 keyframe was compressed against these bytes: changed, those recordings no
/// longer decode. Length and CRC-32 as `python3 -c "import zlib; ..."` gave them for the file
/// when it was committed.
#[test]
fn keyframe_skeleton_is_frozen() {
    assert_eq!(KEYFRAME_SKELETON.len(), 21_345);
    assert_eq!(crc32fast::hash(KEYFRAME_SKELETON), 0x4497_0dc2);
}

/// The first sample record of `bytes`: (flags byte, payload length).
fn first_step(bytes: &[u8]) -> (u8, usize) {
    let mut pos = FILE_MAGIC.len();
    while let Some(h) = bytes.get(pos..).and_then(decode_head) {
        if h.kind == RecordType::Step as u8 {
            return (bytes[pos + FRAME_HEADER], h.len as usize);
        }
        pos += FRAME_HEADER + h.len as usize;
    }
    panic!("no step record");
}

/// A format-3 keyframe says it used the built-in skeleton (flag 4), is smaller than the same
/// sample's format-2 keyframe, and decodes to the same sample; format 2 is still written
/// (on request) and read as before.
#[test]
fn a_keyframe_is_smaller_against_the_built_in_skeleton() {
    let s = &samples()[..3];
    let v3 = support::encode_recording(s);
    let v2 = support::encode_recording_as(s, 2);
    let ((f3, n3), (f2, n2)) = (first_step(&v3), first_step(&v2));
    eprintln!("keyframe payload: format 3 {n3} B, format 2 {n2} B");
    assert_eq!((f3, f2), (4, 0), "keyframe flags");
    assert!(n3 + 500 < n2, "format 3 {n3} B, format 2 {n2} B");
    for bytes in [v3, v2] {
        let rec = Recording::from_bytes("mem", bytes).expect("open");
        assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
        assert_eq!(decode_all(&rec), s);
    }
}
