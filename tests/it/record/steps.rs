//! Format 2's steps: what one damaged record costs (the rest of its chain, then reading
//! resumes at the next keyframe), seeking across chains, format 1 still written and read, and
//! every sample of a live recording decoding to exactly the JSON that was written.

use super::*;
use perftop::record::format::{decode_head, RecordType, FILE_MAGIC};

/// Sample frames of a recording: (offset, kind, length including the frame header).
fn sample_frames(data: &[u8]) -> Vec<(usize, u8, usize)> {
    let mut out = Vec::new();
    let mut pos = FILE_MAGIC.len();
    while let Some(h) = data.get(pos..).and_then(decode_head) {
        let len = FRAME_HEADER + h.len as usize;
        let samples = [RecordType::Keyframe, RecordType::Delta, RecordType::Step];
        if samples.iter().any(|k| *k as u8 == h.kind) {
            out.push((pos, h.kind, len));
        }
        pos += len;
    }
    out
}

/// `samples()` (130, keyframes at 0, 60 and 120) with the record of sample `k` damaged.
fn damaged_at(k: usize) -> (Recording, Vec<u8>) {
    let mut bytes = encode(samples());
    let frames = sample_frames(&bytes);
    assert_eq!(frames.len(), samples().len());
    let (at, kind, len) = frames[k];
    assert_eq!(kind, RecordType::Step as u8, "format 2 writes steps only");
    bytes[at + len - 3] ^= 0x40;
    (
        Recording::from_bytes("damaged", bytes.clone()).expect("open"),
        bytes,
    )
}

#[test]
fn a_damaged_step_loses_the_rest_of_its_chain_then_reading_resumes() {
    let s = samples();
    let (rec, _) = damaged_at(70);
    // Samples 70..120 are lost (the damaged one and the 49 steps after it), by hand: 130 - 50.
    assert_eq!(rec.len(), 80, "{:?}", rec.warnings);
    let want: Vec<Sample> = s[..70].iter().chain(&s[120..]).cloned().collect();
    assert_eq!(decode_all(&rec), want);
    assert!(
        rec.warnings.iter().any(|w| w.contains("checksum")),
        "{:?}",
        rec.warnings
    );
    assert!(
        rec.warnings
            .iter()
            .any(|w| w.contains("49 sample(s)") && w.contains("next keyframe")),
        "{:?}",
        rec.warnings
    );
    // The timeline resumes at the next keyframe's time.
    assert_eq!(rec.samples[70].wall_ms, s[120].time.wall_ms);
    assert!(rec.samples[70].is_key);
}

#[test]
fn a_damaged_keyframe_loses_its_chain_and_no_more() {
    let s = samples();
    let (rec, _) = damaged_at(60);
    assert_eq!(rec.len(), 70, "{:?}", rec.warnings);
    let want: Vec<Sample> = s[..60].iter().chain(&s[120..]).cloned().collect();
    assert_eq!(decode_all(&rec), want);
    // The last step of a chain costs only itself.
    let (rec, _) = damaged_at(119);
    assert_eq!(rec.len(), 129);
    let want: Vec<Sample> = s[..119].iter().chain(&s[120..]).cloned().collect();
    assert_eq!(decode_all(&rec), want);
}

#[test]
fn a_copied_step_is_skipped_not_decoded_against_the_wrong_sample() {
    let s = samples();
    let bytes = encode(s);
    let frames = sample_frames(&bytes);
    // Sample 10's record twice in a row, as a bad copy would leave it.
    let (at, _, len) = frames[10];
    let mut dup = bytes[..at + len].to_vec();
    dup.extend_from_slice(&bytes[at..]);
    let rec = Recording::from_bytes("dup", dup).expect("open");
    assert_eq!(rec.len(), s.len(), "{:?}", rec.warnings);
    assert_eq!(decode_all(&rec), s);
    assert!(
        rec.warnings.iter().any(|w| w.contains("copied record")),
        "{:?}",
        rec.warnings
    );
}

#[test]
fn seeking_anywhere_decodes_the_sample_written_there() {
    let s = samples();
    let rec = Recording::from_bytes("seek", encode(s)).expect("open");
    // One decoder reused in an order that jumps back, forward within a chain, across chains,
    // and repeats a sample; each answer checked against a fresh decoder and the original.
    let mut shared = Decoder::default();
    for &i in &[
        5usize, 4, 59, 60, 61, 125, 119, 0, 64, 64, 63, 129, 1, 100, 30,
    ] {
        let t = s[i].time.wall_ms;
        let j = rec.seek(t + 500);
        assert_eq!(j, i);
        assert_eq!(rec.decode(j, &mut shared).expect("shared"), s[i], "{i}");
        let fresh = rec.decode(j, &mut Decoder::default()).expect("fresh");
        assert_eq!(fresh, s[i], "{i}");
    }
}

#[test]
fn format_1_is_still_written_on_request_and_read() {
    let s = &samples()[..70];
    let mut h = header_for(&s[0], Duration::from_secs(1), 0);
    h.format_version = 1;
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    for (i, x) in s.iter().enumerate() {
        w.sample(x, i as u64).expect("sample");
    }
    let bytes = w.into_inner();
    let kinds: Vec<u8> = sample_frames(&bytes).iter().map(|f| f.1).collect();
    assert_eq!(kinds[0], RecordType::Keyframe as u8);
    assert!(kinds[1..60].iter().all(|k| *k == RecordType::Delta as u8));
    assert_eq!(kinds[60], RecordType::Keyframe as u8);
    let rec = Recording::from_bytes("v1", bytes).expect("open");
    assert_eq!(rec.header().map(|h| h.format_version), Some(1));
    assert_eq!(decode_all(&rec), s);
}

#[test]
fn a_newer_format_is_a_clear_error() {
    let s = &samples()[..3];
    let mut h = header_for(&s[0], Duration::from_secs(1), 0);
    h.format_version = 99;
    let w = Writer::new(Vec::new(), &h).expect("header");
    let e = Recording::from_bytes("new", w.into_inner()).expect_err("newer format");
    assert!(format!("{e:#}").contains("newer perftop"), "{e:#}");
}

/// Every sample of a recording of this machine (its real /proc, processes coming and going
/// between samples, more than two chains) decodes to the JSON its writer serialized, byte for
/// byte, and to the same `Sample`.
#[test]
fn every_sample_of_a_live_recording_round_trips() {
    let mut reader = Reader::new(Root::new("/"));
    let mut written = Vec::new();
    let h = header_for(&reader.sample(), Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    for i in 0..130u64 {
        if i % 7 == 0 {
            // A process that appears in one sample and is gone by a later one.
            let _ = Command::new("sleep").arg("0.02").spawn();
        }
        std::thread::sleep(Duration::from_millis(5));
        let s = reader.sample();
        w.sample(&s, i).expect("sample");
        written.push(s);
    }
    let rec = Recording::from_bytes("live", w.into_inner()).expect("open");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.len(), written.len());
    let keys = rec.samples.iter().filter(|r| r.is_key).count();
    assert_eq!(keys, 3);
    let mut d = Decoder::default();
    for (i, s) in written.iter().enumerate() {
        let json = serde_json::to_vec(s).expect("json");
        let got = rec.decode_json(i, &mut d).expect("decode");
        assert!(got == json, "sample {i}: decoded JSON differs");
        // The same parse the writer's JSON would get.
        let want: Sample = serde_json::from_slice(&json).expect("parse");
        assert_eq!(rec.decode(i, &mut d).expect("decode"), want, "sample {i}");
    }
}
