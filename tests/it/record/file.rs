//! The file itself: round trip, delta compression, flipped bytes, torn tails, foreign files,
//! a full disk, segments and retention, and any damage (a property test).

use super::*;
use proptest::prelude::*;

#[test]
fn round_trip_keyframes_and_deltas() {
    let s = samples();
    let bytes = encode(s);
    let rec = Recording::from_bytes("mem", bytes.clone()).expect("open");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    assert_eq!(rec.len(), s.len());
    assert_eq!(rec.samples.iter().filter(|r| r.is_key).count(), 3);
    assert_eq!(decode_all(&rec), s);
    let h = rec.header().expect("header");
    assert_eq!(h.format_version, 3);
    assert_eq!(h.cpus, 2);
    assert_eq!(rec.seek(T0 + 65_500), 65);
    assert_eq!(rec.seek(T0 - 1), 0);
    // Steps are much smaller than keyframes: this synthetic host (every counter moves every
    // second) took ~500 B/sample in format 1 (deltas against the keyframe).
    let per = bytes.len() / s.len();
    eprintln!("{per} bytes/sample");
    assert!(per < 500, "{per} bytes/sample");
}

#[test]
fn deltas_compress_against_their_keyframe() {
    let s = &samples()[..61];
    let h = header_for(&s[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(Vec::new(), &h).expect("header");
    let sizes: Vec<usize> = s
        .iter()
        .enumerate()
        .map(|(i, x)| w.sample(x, i as u64).expect("sample"))
        .collect();
    let json = serde_json::to_vec(&s[0]).expect("json").len();
    let delta = sizes[1..60].iter().sum::<usize>() / 59;
    eprintln!(
        "json {json} B, keyframes {} / {} B, deltas {delta} B mean",
        sizes[0], sizes[60]
    );
    // A keyframe is the whole sample compressed; a delta only what changed since its keyframe.
    assert!(sizes[0] < json / 2, "{sizes:?}");
    assert!(delta * 4 < sizes[0], "{sizes:?}");
    assert!(delta < 500, "{delta}");
    let rec = Recording::from_bytes("sizes", w.into_inner()).expect("open");
    let keys: Vec<usize> = (0..rec.len()).filter(|&i| rec.samples[i].is_key).collect();
    assert_eq!(keys, [0, 60]);
    assert_eq!(decode_all(&rec), s);
}

#[test]
fn flipped_bytes_skip_the_rest_of_a_chain_and_resume() {
    let s = samples();
    let mut bytes = encode(s);
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 8] {
        *b ^= 0x5a;
    }
    let rec = Recording::from_bytes("flipped", bytes).expect("open");
    assert!(!rec.warnings.is_empty());
    assert!(
        rec.warnings.iter().any(|w| w.contains("skipped")),
        "{:?}",
        rec.warnings
    );
    // One damaged record costs at most the rest of its chain: a keyframe's worth of samples.
    assert!(
        rec.len() >= s.len() - 60 && rec.len() < s.len(),
        "{}",
        rec.len()
    );
    // What remains decodes to the original samples.
    for (i, got) in decode_all(&rec).iter().enumerate() {
        assert!(s.contains(got), "sample {i} differs");
    }
    // The last sample survives.
    assert_eq!(
        rec.samples.last().map(|r| r.wall_ms),
        s.last().map(|x| x.time.wall_ms)
    );
}

#[test]
fn damaged_keyframe_loses_only_its_deltas() {
    let s = samples();
    let mut bytes = encode(&s[..70]);
    let rec = Recording::from_bytes("ok", bytes.clone()).expect("open");
    // The second keyframe (sample 60): damage its payload.
    let key2 = &rec.samples[60];
    assert!(key2.is_key);
    let at = bytes.len() - 1; // the last delta: damaged tail byte
    bytes[at] ^= 1;
    let rec2 = Recording::from_bytes("tail", bytes).expect("open");
    assert_eq!(rec2.len(), 69);
    assert_eq!(decode_all(&rec2), &s[..69]);
}

#[test]
fn truncated_at_any_byte_reads_the_complete_records() {
    let s = &samples()[..8];
    let bytes = encode(s);
    let mut last = 0;
    for cut in 8..=bytes.len() {
        let rec = Recording::from_bytes("cut", bytes[..cut].to_vec()).expect("open");
        assert!(rec.len() >= last, "cut {cut}");
        last = rec.len();
        let got = decode_all(&rec);
        assert_eq!(got, &s[..got.len()], "cut {cut}");
        if cut > FRAME_HEADER + 8 && cut < bytes.len() && !rec.warnings.is_empty() {
            assert!(
                rec.warnings.iter().any(|w| w.contains("tail")),
                "{:?}",
                rec.warnings
            );
        }
    }
    assert_eq!(last, s.len());
}

#[test]
fn empty_and_foreign_files_are_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty.rec");
    std::fs::write(&empty, b"").expect("write");
    let e = Recording::open(&empty).expect_err("empty");
    assert!(format!("{e:#}").contains("is empty"), "{e:#}");
    let foreign = dir.path().join("notes.txt");
    std::fs::write(&foreign, b"hello, this is not a recording\n").expect("write");
    let e = Recording::open(&foreign).expect_err("foreign");
    assert!(
        format!("{e:#}").contains("not a perftop recording"),
        "{e:#}"
    );
    let e = Recording::open(&dir.path().join("missing")).expect_err("missing");
    assert!(format!("{e:#}").contains("missing"), "{e:#}");
    let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(["dump"])
        .arg(&foreign)
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a perftop recording"), "{err}");
}

/// A sink that accepts `limit` bytes, then fails like a full disk (ENOSPC), writing part of the
/// last buffer as a real file system would.
struct FullDisk {
    data: Vec<u8>,
    limit: usize,
}

impl Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = self.limit - self.data.len();
        if room == 0 {
            return Err(io::Error::from_raw_os_error(28));
        }
        let n = room.min(buf.len());
        self.data.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn disk_full_stops_with_a_clear_error_and_a_readable_file() {
    let s = samples();
    let h = header_for(&s[0], Duration::from_secs(1), 0);
    let mut w = Writer::new(
        FullDisk {
            data: Vec::new(),
            limit: encode(s).len() / 2,
        },
        &h,
    )
    .expect("header");
    let mut err = None;
    let mut written = 0;
    for (i, x) in s.iter().enumerate() {
        match w.sample(x, i as u64) {
            Ok(_) => written += 1,
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let e = err.expect("the disk fills up");
    assert!(is_disk_full(&e), "{e}");
    // Later writes refuse rather than append after a torn record.
    assert!(w.sample(&s[0], 0).is_err());
    let data = w.into_inner().data;
    let rec = Recording::from_bytes("full", data).expect("open");
    assert_eq!(rec.len(), written);
    assert_eq!(decode_all(&rec), &s[..written]);
    assert!(
        rec.warnings.iter().any(|w| w.contains("tail")),
        "{:?}",
        rec.warnings
    );
}

#[test]
fn restart_opens_a_new_segment_and_retention_trims_old_ones() {
    let s = samples();
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("rec");
    let mut r = Recorder::create(&base, &s[0], Duration::from_secs(1), Retention::default())
        .expect("create");
    for x in &s[..10] {
        r.sample(x).expect("sample");
    }
    drop(r); // as if killed: no stop marker
    let mut r2 = Recorder::create(&base, &s[0], Duration::from_secs(1), Retention::default())
        .expect("create again");
    for x in &s[10..20] {
        r2.sample(x).expect("sample");
    }
    r2.action(&Action {
        kind: "applied".into(),
        name: "vm.dirty_ratio".into(),
        from: Some("20".into()),
        to: Some("10".into()),
    })
    .expect("action");
    r2.finish("stop").expect("finish");
    assert_eq!(list_segments(&base).len(), 2);
    let rec = Recording::open(&base).expect("open");
    assert_eq!(rec.len(), 20);
    let gaps: Vec<&str> = rec
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Gap(g) => Some(g.reason.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(gaps, ["start", "start", "stop"]);
    assert!(rec.gap_before(10));
    assert!(!rec.gap_before(11));
    assert!(rec
        .events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::Action(a) if a.name == "vm.dirty_ratio")));

    // Retention: a 64 KiB segment limit with a 200 KiB total keeps rolling and trimming.
    let base2 = dir.path().join("ret");
    let ret = Retention {
        max_size: Some(200 * 1024),
        max_age: None,
    };
    let mut r = Recorder::create(&base2, &s[0], Duration::from_secs(1), ret).expect("create");
    // Enough for the limit to delete something (~1.5 times it).
    while r.bytes < 300 * 1024 {
        for x in s {
            r.sample(x).expect("sample");
        }
    }
    r.finish("stop").expect("finish");
    let segs = list_segments(&base2);
    assert!(segs.len() >= 2, "{segs:?}");
    let total: u64 = segs
        .iter()
        .map(|(_, p)| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum();
    assert!(total <= 200 * 1024 + 80 * 1024, "{total}");
    assert!(segs[0].0 > 0, "the oldest segment was deleted: {segs:?}");
    let rec = Recording::open(&base2).expect("open");
    assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
    decode_all(&rec);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Any damage (flips, cuts, inserted garbage) gives a clean result or a clean error, and every
    /// sample that is returned decodes to one that was written.
    #[test]
    fn reader_survives_damage(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        cut in any::<prop::sample::Index>(),
        junk in proptest::collection::vec(any::<u8>(), 0..64),
        junk_at in any::<prop::sample::Index>(),
    ) {
        let s = &samples()[..70];
        static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
        let mut b = BYTES.get_or_init(|| encode(&samples()[..70])).clone();
        for (i, x) in &flips {
            let at = i.index(b.len());
            b[at] ^= x;
        }
        let at = junk_at.index(b.len());
        b.splice(at..at, junk.iter().copied());
        let len = b.len();
        b.truncate(cut.index(len + 1));
        if let Ok(rec) = Recording::from_bytes("fuzz", b) {
            let mut d = Decoder::default();
            for i in 0..rec.len() {
                if let Ok(x) = rec.decode(i, &mut d) {
                    prop_assert!(s.contains(&x));
                }
            }
        }
    }
}
