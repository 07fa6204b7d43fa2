//! The on-disk layout: file magic, frame header, record types and the header/marker payloads.
//!
//! All integers are little-endian. See the module docs of `crate::record` for the full picture.

use serde::{Deserialize, Serialize};

/// The first 8 bytes of every segment file.
pub const FILE_MAGIC: [u8; 8] = *b"PERFTOP\x1a";
/// The first 4 bytes of every frame: lets a reader find the next frame after a damaged one.
pub const SYNC: [u8; 4] = [0xB5, b'P', b'T', b'R'];
/// The newest format version this perftop writes; it reads every version up to this one.
/// Version 2 writes [`RecordType::Step`] between keyframes, version 1 [`RecordType::Delta`]; the
/// header's version picks which (a reader told version 1 only ever met deltas). Version 3 is
/// version 2 whose keyframes may compress their skeleton against the built-in
/// [`KEYFRAME_SKELETON`] ([`STEP_KEY_DICT`]): a format-2 perftop would misread them.
pub const FORMAT_VERSION: u32 = 3;
/// SYNC(4) len(4) type(1) wall_ms(8) mono_ns(8) crc32(4).
pub const FRAME_HEADER: usize = 29;
/// No frame payload is larger than this; a larger length field means a damaged frame.
pub const MAX_PAYLOAD: usize = 64 << 20;
/// Full keyframe every this many sample records (the rest are steps or deltas after it). With
/// steps this also bounds what one damaged record costs (the rest of its chain: at most 59
/// samples) and what a seek decodes (at most 60 records).
pub const DEFAULT_KEYFRAME_EVERY: u32 = 60;
/// zstd level for samples whose JSON is at most [`ZSTD_LARGE_SAMPLE`] bytes (up to ~100 CPUs):
/// 6 makes deltas ~15% smaller than zstd's default 3 for ~0.03 ms more per sample on a 2-CPU
/// host. Any level decodes the same way, so this is a writer choice, not a format change.
pub const ZSTD_LEVEL: i32 = 6;
/// zstd level for larger samples: level 6 would cost ~3 ms more per sample on a 512-CPU host.
pub const ZSTD_LEVEL_LARGE: i32 = 3;
/// Sample JSON above this many bytes is compressed at [`ZSTD_LEVEL_LARGE`].
pub const ZSTD_LARGE_SAMPLE: usize = 256 << 10;
/// zstd minimum match length for deltas. A delta is its keyframe with a few hundred numbers
/// changed; short matches inside those numbers cost more to encode than the literal digits, so
/// 6 (instead of 4-5 at these levels) saves another ~5-10%.
pub const ZSTD_DELTA_MIN_MATCH: u32 = 6;

/// Step flag: the step follows a previous sample (else it is a keyframe).
pub const STEP_AFTER: u8 = 1;
/// Step flag: the skeleton is the previous sample's (so it is not stored).
pub const STEP_SAME_SKELETON: u8 = 2;
/// Step flag (format 3, keyframes only): the skeleton is compressed with
/// [`KEYFRAME_SKELETON`] as its dictionary.
pub const STEP_KEY_DICT: u8 = 4;

/// What a keyframe's skeleton is compressed against from format 3 on: the skeleton of one
/// sample of a 2-vCPU VM (2026-11-27), its host's strings (names, command lines, paths)
/// emptied. A keyframe has no sample before it, and its skeleton (every key of every pane,
/// ~20 KB) was 3.4 of its 5 KB on that VM, ~57 bytes of every sample at one keyframe a minute;
/// against this it is ~0.8 KB. Frozen: every format-3 recording is decoded with these bytes
/// (`keyframe_skeleton_is_frozen` pins them), so a better one needs a new flag or version.
pub const KEYFRAME_SKELETON: &[u8] = include_bytes!("keyframe_skeleton.json");

/// zstd minimum match length for steps (format 2).
pub const ZSTD_STEP_MIN_MATCH: u32 = 6;
/// zstd level for a step's skeleton when it is not the previous one's. It changed in 54 of 90
/// samples of an idle 2-vCPU VM (a rotated read's `since` on one kernel thread, a note on and
/// off), each time the previous ~21 KB with a few fields in or out: any level finds those long
/// matches, and level 1 loads the previous skeleton as its dictionary for far less than 6 (or
/// 3). Two recorders at once, 60 s at 1 s, two runs each with the order swapped, CPU a
/// sample: level 1 2.40/1.93 ms against level 6 2.51/2.03; level 1 1.91/1.72 against level 3
/// 2.09/1.82; for 3-6 more bytes a sample (~2 %).
pub const ZSTD_SKELETON_LEVEL: i32 = 1;

/// The zstd level the writer uses for a sample of `json_len` bytes.
pub fn zstd_level(json_len: usize) -> i32 {
    if json_len > ZSTD_LARGE_SAMPLE {
        ZSTD_LEVEL_LARGE
    } else {
        ZSTD_LEVEL
    }
}

/// Record types. Readers skip types they do not know (with a note), so a type an older reader
/// can do without can be added without a format version bump (`Step` could not: it carries the
/// samples, so it came with format 2, which older readers refuse with a clear error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordType {
    /// JSON [`Header`], uncompressed, always the first frame of a segment.
    Header = 1,
    /// `raw_len u32` + zstd(JSON sample).
    Keyframe = 2,
    /// `raw_len u32` + `keyframe offset u64` + zstd(JSON sample) with the keyframe's JSON as a
    /// raw-content dictionary.
    Delta = 3,
    /// JSON [`Gap`]: the recorder started, stopped or lost samples.
    Gap = 4,
    /// JSON [`Action`]: perftop changed the system (a tweak applied or undone).
    Action = 5,
    /// Format 2: a sample as its skeleton and column (`record::numdiff`), against the previous
    /// sample's or (a keyframe) against nothing: `flags u8` ([`STEP_AFTER`],
    /// [`STEP_SAME_SKELETON`]), the previous sample's record checksum `u32` (when after one),
    /// then LEB128 lengths: column, skeleton (unless the same as the previous one), compressed
    /// column; then zstd(column) and zstd(skeleton) (unless the same), each with the previous
    /// sample's as a raw-content dictionary.
    Step = 6,
    /// JSON [`KernelMark`]: what the kernel log said with the sample that follows (a hung task,
    /// an I/O error...), so a replay marks it on the timeline without decoding every sample.
    /// Older readers skip it with a note; the sample itself holds the same events.
    Kernel = 7,
    /// Which findings held in the interval ending at the next sample, when that set changed
    /// (`record::digest`), so explain finds episodes without decoding every sample. Older
    /// readers skip it with a note; nothing else depends on it.
    Digest = 8,
}

impl RecordType {
    pub fn from_u8(v: u8) -> Option<RecordType> {
        Some(match v {
            1 => RecordType::Header,
            2 => RecordType::Keyframe,
            3 => RecordType::Delta,
            4 => RecordType::Gap,
            5 => RecordType::Action,
            6 => RecordType::Step,
            7 => RecordType::Kernel,
            8 => RecordType::Digest,
            _ => return None,
        })
    }
}

/// The segment header: who recorded what, where.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format_version: u32,
    pub perftop_version: String,
    #[serde(default)]
    pub sample_version: u32,
    #[serde(default)]
    pub hostname: Option<String>,
    #[serde(default)]
    pub kernel: Option<String>,
    /// Topology when recording started: online CPUs, NUMA nodes, disks, NICs.
    #[serde(default)]
    pub cpus: usize,
    #[serde(default)]
    pub nodes: usize,
    #[serde(default)]
    pub disks: Vec<String>,
    #[serde(default)]
    pub nics: Vec<String>,
    #[serde(default)]
    pub cpu_model: Option<String>,
    /// Sampling interval in ms.
    #[serde(default)]
    pub interval_ms: u64,
    #[serde(default)]
    pub keyframe_every: u32,
    /// Segment number within the recording (0 for the first file).
    #[serde(default)]
    pub segment: u32,
    #[serde(default)]
    pub created_wall_ms: i64,
}

/// A discontinuity on the timeline. `reason`: `start`, `stop`, `disk-full`, `error`, `rotate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The kernel log's events (not OOM kills: the `oom_kill` counter marks those) that arrived
/// with the sample after this marker.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelMark {
    pub events: Vec<crate::sample::KernelEvent>,
}

impl KernelMark {
    /// The marker for sample `s`, when its kernel log read has events to mark.
    pub fn of(s: &crate::sample::Sample) -> Option<KernelMark> {
        let events: Vec<_> = s
            .kernel
            .as_ref()?
            .events
            .iter()
            .filter(|e| e.kind != "oom_kill")
            .cloned()
            .collect();
        (!events.is_empty()).then_some(KernelMark { events })
    }

    /// `kernel log: 2 hung tasks (dd 4242), 1 I/O error (vda)`: each kind counted, the first
    /// task or device of it named.
    pub fn summary(&self) -> String {
        let mut kinds: Vec<(&str, usize, String)> = Vec::new();
        for e in &self.events {
            match kinds.iter_mut().find(|(k, _, _)| *k == e.kind) {
                Some(k) => k.1 += 1,
                None => {
                    let whom = match (&e.device, &e.comm, e.pid) {
                        (Some(d), _, _) => crate::safe::line(d).into_owned(),
                        (None, Some(c), Some(p)) => format!("{} {p}", crate::safe::line(c)),
                        (None, Some(c), None) => crate::safe::line(c).into_owned(),
                        (None, None, _) => String::new(),
                    };
                    kinds.push((e.kind.as_str(), 1, whom));
                }
            }
        }
        let parts: Vec<String> = kinds
            .iter()
            .map(|(k, n, whom)| {
                let name = match *k {
                    "io_error" => "I/O error".to_string(),
                    other => other.replace('_', " "),
                };
                let plural = if *n == 1 { "" } else { "s" };
                let whom = if whom.is_empty() {
                    String::new()
                } else {
                    format!(" ({whom})")
                };
                format!("{n} {name}{plural}{whom}")
            })
            .collect();
        format!("kernel log: {}", parts.join(", "))
    }
}

/// Something perftop did to the system (written by the tweak feature), shown on the timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    /// `applied` or `undone`.
    pub kind: String,
    /// The tweak, e.g. `vm.dirty_ratio`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// A decoded frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHead {
    pub len: u32,
    pub kind: u8,
    pub wall_ms: i64,
    pub mono_ns: u64,
    pub crc: u32,
}

/// Encodes one frame (header + payload) into `out`.
pub fn encode_frame(
    out: &mut Vec<u8>,
    kind: RecordType,
    wall_ms: i64,
    mono_ns: u64,
    payload: &[u8],
) {
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&SYNC);
    let start = out.len();
    out.extend_from_slice(&len.to_le_bytes());
    out.push(kind as u8);
    out.extend_from_slice(&wall_ms.to_le_bytes());
    out.extend_from_slice(&mono_ns.to_le_bytes());
    let mut h = crc32fast::Hasher::new();
    h.update(&out[start..]);
    h.update(payload);
    out.extend_from_slice(&h.finalize().to_le_bytes());
    out.extend_from_slice(payload);
}

/// Parses the header of a frame starting at `b[0]` (which must hold `FRAME_HEADER` bytes and
/// start with `SYNC`).
pub fn decode_head(b: &[u8]) -> Option<FrameHead> {
    if b.len() < FRAME_HEADER || b[..4] != SYNC {
        return None;
    }
    Some(FrameHead {
        len: u32::from_le_bytes(b[4..8].try_into().ok()?),
        kind: b[8],
        wall_ms: i64::from_le_bytes(b[9..17].try_into().ok()?),
        mono_ns: u64::from_le_bytes(b[17..25].try_into().ok()?),
        crc: u32::from_le_bytes(b[25..29].try_into().ok()?),
    })
}

/// The checksum a frame with this header and payload must carry.
pub fn frame_crc(head_bytes: &[u8], payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&head_bytes[4..25]);
    h.update(payload);
    h.finalize()
}
