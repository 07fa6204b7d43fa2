//! Recordings that claim more than they hold: zstd bombs (records whose sizes say gigabytes),
//! sparse files of several GB, outputs that are not files, and a cut with nothing in it. Memory
//! and time must follow what a recording really holds, never what it claims.

use super::support::tmux::Session;
use super::support::{skip, synth_samples, T0};
use perftop::record::format::{encode_frame, Header, RecordType, FILE_MAGIC};
use perftop::record::writer::header_for;
use perftop::record::{Recording, Writer};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const GIB: u64 = 1 << 30;

/// A zstd frame of RLE blocks (4 bytes each) that inflates to `n` bytes of `x` (`n` a multiple
/// of 128 KiB): 2 GiB in 64 KiB, the way a bomb is built by hand. No content size in the frame
/// header, as perftop's writer leaves it out too.
fn rle_bomb(n: u64) -> Vec<u8> {
    const BLOCK: u64 = 128 << 10;
    // Magic, then the frame header descriptor (no content size, checksum or dictionary) and
    // the window descriptor (2^(10 + 7) = 128 KiB).
    let mut f = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3];
    let blocks = n / BLOCK;
    for b in 0..blocks {
        let last = u32::from(b + 1 == blocks);
        // Block header (3 bytes, little-endian): last flag, type 1 (RLE), size (repeats).
        let h = (BLOCK as u32) << 3 | 1 << 1 | last;
        f.extend_from_slice(&h.to_le_bytes()[..3]);
        f.push(b'x');
    }
    f
}

/// A plain keyframe payload: `raw_len` then the zstd frame.
fn keyframe(raw_len: u32, frame: &[u8]) -> Vec<u8> {
    let mut p = raw_len.to_le_bytes().to_vec();
    p.extend_from_slice(frame);
    p
}

/// A step that starts a chain (flags 0): LEB128 column and skeleton lengths and the compressed
/// column's length, then the column's frame.
fn keyframe_step(col_len: u64, frame: &[u8]) -> Vec<u8> {
    let mut p = vec![0u8];
    for mut v in [col_len, 10, frame.len() as u64] {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                p.push(b);
                break;
            }
            p.push(b | 0x80);
        }
    }
    p.extend_from_slice(frame);
    p
}

/// A header claiming a host of `cpus` CPUs (the rest as the small synthetic host's).
fn header(cpus: usize) -> Header {
    let s = synth_samples(0..1);
    let mut h = header_for(&s[0], Duration::from_secs(1), 0);
    h.cpus = cpus;
    h
}

/// A recording of `n` real samples (a small synthetic host) under `h`.
fn real_samples(h: &Header, ticks: std::ops::Range<u64>) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), h).expect("header");
    for s in synth_samples(ticks) {
        w.sample(&s, 0).expect("sample");
    }
    w.into_inner()
}

/// A header claiming 4,096 CPUs (so dump decodes on every thread it may), 4 keyframes each
/// claiming 2 GiB (and inflating to it), 6 real samples appended whole (`cat`), then a
/// keyframe claiming 1 MiB that inflates to 2 GiB.
fn bomb_recording(path: &Path) {
    let h = header(4096);
    let mut out = FILE_MAGIC.to_vec();
    let json = serde_json::to_vec(&h).expect("header json");
    encode_frame(&mut out, RecordType::Header, T0, 0, &json);
    let bomb = rle_bomb(2 * GIB);
    for k in 0..4 {
        encode_frame(
            &mut out,
            RecordType::Keyframe,
            T0 - 10_000 + k * 1000,
            0,
            &keyframe(u32::try_from(2 * GIB).expect("u32"), &bomb),
        );
    }
    out.extend_from_slice(&real_samples(&h, 0..6));
    encode_frame(
        &mut out,
        RecordType::Keyframe,
        T0 + 6000,
        0,
        &keyframe(1 << 20, &bomb),
    );
    std::fs::write(path, out).expect("write recording");
}

/// `perftop dump --format json PATH` under `timed`, its peak RSS and time said on stderr;
/// `None` (the test skipped, visibly) without `/usr/bin/time`.
fn dump_json_timed(path: &Path, test: &str, what: &str) -> Option<(Output, u64, Duration)> {
    let args = [
        "dump".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        path.as_os_str(),
    ];
    let Some((o, kb, took)) = timed(&args) else {
        skip(test, "no /usr/bin/time to measure peak RSS");
        return None;
    };
    eprintln!("{what}: peak RSS {kb} kB, {took:?}");
    Some((o, kb, took))
}

/// `perftop ARGS` under `/usr/bin/time`: its output, peak RSS (kB) and wall time.
fn timed(args: &[&std::ffi::OsStr]) -> Option<(Output, u64, Duration)> {
    let time = Path::new("/usr/bin/time");
    if !time.is_file() {
        return None;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("time");
    let start = Instant::now();
    let o = Command::new(time)
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_perftop"))
        .args(args)
        .output()
        .expect("run perftop under /usr/bin/time");
    let took = start.elapsed();
    let text = std::fs::read_to_string(&report).expect("time's report");
    let kb = text
        .lines()
        .rev()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS in {text:?}"));
    Some((o, kb, took))
}

/// Issue 37 item 9: 4 records claiming 2 GiB each cost `dump` 8 GB and seconds each (in
/// parallel under a header claiming 4,096 CPUs). Now each is refused by its claim (a sample of
/// the host the header describes is at most ~52 MB), the liar stops at the 1 MiB it claims,
/// and the real samples all come out.
#[test]
fn dump_of_zstd_bombs_stays_small_and_fast() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = dir.path().join("bombs.ptrec");
    bomb_recording(&rec);
    let size = std::fs::metadata(&rec).expect("stat").len();
    assert!(size < 1 << 20, "a {size}-byte file");
    let Some((o, kb, took)) = dump_json_timed(
        &rec,
        "dump_of_zstd_bombs_stays_small_and_fast",
        "dump of zstd bombs",
    ) else {
        return;
    };
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(kb <= 300 << 10, "peak RSS {kb} kB; stderr:\n{err}");
    assert!(took <= Duration::from_secs(5), "{took:?}; stderr:\n{err}");
    assert_eq!(
        err.matches(
            "claims 2147483648 bytes (2048.0 MiB), more than a sample of the recorded host can be"
        )
        .count(),
        4,
        "{err}"
    );
    assert!(
        err.contains("decodes to more than the 1048576 bytes it claims"),
        "{err}"
    );
    // 6 samples: 5 intervals.
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count(),
        5,
        "{err}"
    );
}

/// A step record claiming 1 GiB was under the old fixed 1 GiB cap and was decoded; under the
/// small host's header it is refused when the recording is opened, with its byte offset, and
/// the samples after it (a new chain) are kept.
#[test]
fn a_step_claiming_more_than_its_host_is_left_out_when_opened() {
    let h = header(2);
    let mut out = FILE_MAGIC.to_vec();
    encode_frame(
        &mut out,
        RecordType::Header,
        T0,
        0,
        &serde_json::to_vec(&h).expect("json"),
    );
    let at = out.len();
    encode_frame(
        &mut out,
        RecordType::Step,
        T0 - 1000,
        0,
        &keyframe_step(GIB, &rle_bomb(GIB)),
    );
    out.extend_from_slice(&real_samples(&h, 0..3));
    let start = Instant::now();
    let rec = Recording::from_bytes("steps", out).expect("open");
    assert_eq!(rec.len(), 3, "{:?}", rec.warnings);
    let w = rec
        .warnings
        .iter()
        .find(|w| w.contains(&format!("sample at byte {at}")))
        .unwrap_or_else(|| panic!("no warning for the step: {:?}", rec.warnings));
    // 4 MiB + 2 CPUs x 12 KiB + (3 disks + 3 NICs) x 8 KiB + 1 node x 8 KiB.
    let limit = (4 << 20) + 2 * (12 << 10) + 6 * (8 << 10) + (8 << 10);
    assert_eq!(h.disks.len() + h.nics.len(), 6);
    assert!(
        w.contains(&format!(
            "claims 1073741824 bytes (1024.0 MiB), more than a sample of the recorded host can be ({:.1} MiB)",
            limit as f64 / 1048576.0
        )),
        "{w}"
    );
    let mut d = perftop::record::Decoder::default();
    for i in 0..rec.len() {
        rec.decode(i, &mut d).expect("the real samples decode");
    }
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

/// Issue 37 item 9: `replay` of the bombs showed a blank screen and ignored `q` for minutes.
#[test]
fn replay_of_zstd_bombs_answers_q_within_a_second() {
    if !super::support::tmux::tmux_available() {
        skip(
            "replay_of_zstd_bombs_answers_q_within_a_second",
            "tmux is not installed",
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = dir.path().join("bombs.ptrec");
    bomb_recording(&rec);
    let arg = rec.to_string_lossy().into_owned();
    let r = Session::start_with("replay-bombs", |_| vec!["replay".into(), arg]);
    r.wait("the replay's first frame", |sc| {
        sc.contains("REPLAY PAUSED") && sc.contains(" 1/7 ")
    });
    let pid = r.perftop_pid();
    let start = Instant::now();
    r.keys(&["q"]);
    while Path::new("/proc").join(&pid).exists() {
        assert!(
            start.elapsed() <= Duration::from_secs(1),
            "perftop still running 1 s after q:\n{}",
            r.screen()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!("replay of zstd bombs: gone {:?} after q", start.elapsed());
    r.assert_exited_and_restored("q in a replay of zstd bombs", &["0"]);
}

/// Issue 37 item 10: a sparse 3 GB file cost `dump` 3.1 GB: recordings were read whole. A
/// 4 GiB file with 3 real samples at its start and 3 at its end (a hole between) is dumped in
/// well under that, and all 6 samples come out.
#[test]
fn a_sparse_recording_of_gigabytes_is_read_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sparse.ptrec");
    let h = header(2);
    let mut f = std::fs::File::create(&path).expect("create");
    f.write_all(&real_samples(&h, 0..3)).expect("head");
    let tail = real_samples(&h, 3..6);
    let len = 4 * GIB;
    f.set_len(len).expect("set_len");
    f.seek(SeekFrom::Start(len - (1 << 20))).expect("seek");
    f.write_all(&tail).expect("tail");
    drop(f);
    let Some((o, kb, took)) = dump_json_timed(
        &path,
        "a_sparse_recording_of_gigabytes_is_read_in_bounded_memory",
        "dump of a 4 GiB sparse recording",
    ) else {
        return;
    };
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(kb < 300 << 10, "peak RSS {kb} kB; stderr:\n{err}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    // The hole is skipped, and said so; the two runs of samples are 6 samples (the second
    // run's first is a keyframe after the first's last: 5 intervals).
    assert!(err.contains("no record marker"), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count(),
        5,
        "{err}"
    );
}

fn perftop(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(args)
        .output()
        .expect("run perftop")
}

/// `record -o /dev/full` quietly created `/dev/full.1`: an output that exists and is not a
/// regular file (here a FIFO, and a link to /dev/full) is refused, and nothing is created
/// beside it.
#[test]
fn record_to_a_device_or_fifo_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("mkfifo");
    let link = dir.path().join("full");
    std::os::unix::fs::symlink("/dev/full", &link).expect("symlink");
    let root = crate::support::fixture("vm-2cpu/t1");
    for out in [&fifo, &link] {
        let o = perftop(&[
            "--root".as_ref(),
            root.as_os_str(),
            "record".as_ref(),
            "-o".as_ref(),
            out.as_os_str(),
            "-n".as_ref(),
            "1".as_ref(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{}: {err}", out.display());
        assert!(
            err.contains("is not a regular file (a device, FIFO or socket)"),
            "{err}"
        );
    }
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .collect();
    names.sort();
    assert_eq!(names, vec![fifo, link], "nothing created beside them");
}

/// A `cut` in which no sample decodes succeeded with an empty recording. Now it fails, says
/// why, and leaves no file (and no temporary file) behind.
#[test]
fn a_cut_in_which_no_sample_decodes_fails_and_leaves_no_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = dir.path().join("bad.ptrec");
    let h = header(2);
    let mut out = FILE_MAGIC.to_vec();
    encode_frame(
        &mut out,
        RecordType::Header,
        T0,
        0,
        &serde_json::to_vec(&h).expect("json"),
    );
    // Checksummed keyframes whose zstd data is not zstd.
    for k in 0..3 {
        encode_frame(
            &mut out,
            RecordType::Keyframe,
            T0 + k * 1000,
            0,
            &keyframe(100, b"not a zstd frame"),
        );
    }
    std::fs::write(&rec, out).expect("write");
    assert_eq!(Recording::open(&rec).expect("open").len(), 3);
    let cut = dir.path().join("cut.ptrec");
    let o = perftop(&[
        "cut".as_ref(),
        rec.as_os_str(),
        "-o".as_ref(),
        cut.as_os_str(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("none of the 3 sample(s) in the window 2025-11-21T14:05:30.000Z .. 2025-11-21T14:05:32.000Z decodes"),
        "{err}"
    );
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["bad.ptrec".to_string()], "{err}");
}
