//! What one sample record may decode to, and zstd decoding that stops there.
//!
//! A record's sizes are claims: a 146 KB frame claiming 4 GiB cost `dump` 4.1 GB and 4.3 s
//! when the decoder allocated what the record said. A sample's JSON grows with the host it was
//! taken on, which the recording's header describes (CPUs, NUMA nodes, disks, NICs), so each
//! record is held to what a sample of that host can be ([`sample_limit`], with a hard cap
//! whatever the header says). A record claiming more is skipped without being decoded, and one
//! that decodes to more than it claims is stopped there: the decoder streams into a buffer that
//! grows with the bytes actually produced, never to the size claimed.

use super::format::Header;
use anyhow::{anyhow, bail, Result};
use zstd::zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer, ResetDirective};

// Measured sample JSON (one sample after another, so with the rates' bases; perftop 0.1.0):
// synthetic hosts (`tests/support/synth`, with per-CPU C-states, frequencies, softirqs, softnet
// and IRQ rows) of 64, 512 and 4,096 CPUs: 119 KB, 1.05 MB and 7.86 MB, 1,860-2,050 B per CPU
// all in; the real 16-CPU captures under `tests/fixtures/real` and their recordings: 17.5-28.5
// KB. Disks took 450-600 B each, NUMA nodes ~1 KB, memory, processes and cgroups 2-4 KB each.
// The limits below are 6-13x those, for hosts with more IRQs, idle states or longer names.

/// Sample JSON per CPU (measured at most ~2,050 B).
const PER_CPU: usize = 12 << 10;
/// Per disk and per NIC named in the header (a disk measured ~600 B; a NIC's queues and IRQs
/// mostly count per CPU).
const PER_DEVICE: usize = 8 << 10;
/// Per NUMA node (meminfo, numastat, hugepages: ~1 KB measured).
const PER_NODE: usize = 8 << 10;
/// What does not grow with the topology: memory, PSI, the kept processes (at most ~40),
/// cgroups (at most 64), filesystems, temperatures, problems: ~10 KB measured, so 4 MiB
/// leaves room for long names and many filesystems.
const BASE: usize = 4 << 20;
/// The most one sample's JSON may be whatever its header claims (16 times the 7.86 MB of a
/// 4,096-CPU sample): a header is as easy to forge as a record. A 4,096-CPU header allows
/// 52 MiB, a 2-CPU one 4.1 MiB.
pub const MAX_SAMPLE_JSON: usize = 128 << 20;

/// The most a sample of the host `h` describes can take as JSON (the hard cap when there is no
/// header to go by).
pub fn sample_limit(h: Option<&Header>) -> usize {
    let Some(h) = h else {
        return MAX_SAMPLE_JSON;
    };
    let devices = h.disks.len().saturating_add(h.nics.len());
    BASE.saturating_add(h.cpus.max(1).saturating_mul(PER_CPU))
        .saturating_add(devices.saturating_mul(PER_DEVICE))
        .saturating_add(h.nodes.max(1).saturating_mul(PER_NODE))
        .min(MAX_SAMPLE_JSON)
}

/// `12345678` as `11.8 MiB`.
pub(super) fn mib(n: u64) -> String {
    format!("{:.1} MiB", n as f64 / f64::from(1 << 20))
}

/// The error for a record that claims more than a sample of its host can hold.
pub(super) fn too_large(what: &str, claim: u64, limit: usize) -> anyhow::Error {
    anyhow!(
        "{what} claims {claim} bytes ({}), more than a sample of the recorded host can be ({}): a damaged or forged record, not decoded",
        mib(claim),
        mib(limit as u64)
    )
}

/// The output chunk zstd writes into before it is appended (its own recommended size).
const OUT_CHUNK: usize = 128 << 10;

/// A reusable zstd decoder that stops at a limit.
pub(super) struct Inflater {
    dctx: DCtx<'static>,
    chunk: Vec<u8>,
}

impl Inflater {
    pub fn new() -> Result<Inflater> {
        let dctx = DCtx::try_create().ok_or_else(|| anyhow!("zstd: no memory for a decoder"))?;
        Ok(Inflater {
            dctx,
            chunk: vec![0; OUT_CHUNK],
        })
    }

    /// Uses `dict` as a raw-content dictionary for the frames that follow (none when empty).
    pub fn dictionary(&mut self, dict: &[u8]) -> Result<()> {
        self.dctx
            .reset(ResetDirective::SessionOnly)
            .map_err(zstd_error)?;
        self.dctx.load_dictionary(dict).map_err(zstd_error)?;
        Ok(())
    }

    /// Decodes the zstd frames in `src` into `out` (replacing what it held): `what` claims
    /// `claim` bytes, at most `limit` (else nothing is decoded), and decoding stops with an
    /// error as soon as it produces more than `claim`.
    pub fn inflate(
        &mut self,
        what: &str,
        src: &[u8],
        claim: u64,
        limit: usize,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        out.clear();
        if claim > limit as u64 {
            return Err(too_large(what, claim, limit));
        }
        let max = usize::try_from(claim).unwrap_or(limit);
        self.dctx
            .reset(ResetDirective::SessionOnly)
            .map_err(zstd_error)?;
        // A frame whose window is larger than its content could be is not one of ours; the
        // writer's levels use at most 2^21 (the window also covers the dictionary, also within
        // the limit), so twice the limit is plenty and keeps zstd's own buffer near it.
        let window_log = (usize::BITS - max.saturating_mul(2).leading_zeros()).clamp(22, 30);
        self.dctx
            .set_parameter(DParameter::WindowLogMax(window_log))
            .map_err(zstd_error)?;
        out.reserve(max.min(1 << 20));
        let mut input = InBuffer::around(src);
        loop {
            let mut chunk = OutBuffer::around(&mut self.chunk[..]);
            let hint = self
                .dctx
                .decompress_stream(&mut chunk, &mut input)
                .map_err(|c| anyhow!("{what} does not decompress ({})", zstd_name(c)))?;
            let produced = chunk.pos();
            if out.len() + produced > max {
                bail!("{what} decodes to more than the {claim} bytes it claims: damaged or forged, not decoded");
            }
            out.extend_from_slice(&self.chunk[..produced]);
            let consumed = input.pos() == src.len();
            // 0: a frame ended and everything of it is out. Another frame may follow.
            if hint == 0 && consumed {
                return Ok(());
            }
            if consumed && produced < OUT_CHUNK && hint != 0 {
                // zstd wants more input and there is none: the frame is cut short.
                bail!("{what} ends inside its compressed data (truncated)");
            }
        }
    }
}

fn zstd_name(code: usize) -> &'static str {
    zstd::zstd_safe::get_error_name(code)
}

fn zstd_error(code: usize) -> anyhow::Error {
    anyhow!("zstd: {}", zstd_name(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compress(data: &[u8]) -> Vec<u8> {
        zstd::bulk::compress(data, 3).expect("compress")
    }

    #[test]
    fn limits_follow_the_header_with_a_hard_cap() {
        let h = |cpus: usize, disks: usize, nodes: usize| Header {
            cpus,
            nodes,
            disks: (0..disks).map(|d| format!("sd{d}")).collect(),
            ..Header::default()
        };
        // 4 MiB + 2 x 12 KiB + 1 x 8 KiB + 1 x 8 KiB.
        assert_eq!(sample_limit(Some(&h(2, 1, 1))), (4 << 20) + (40 << 10));
        assert_eq!(
            sample_limit(Some(&h(4096, 0, 64))),
            (4 << 20) + 4096 * (12 << 10) + 64 * (8 << 10)
        );
        assert_eq!(sample_limit(Some(&h(usize::MAX, 0, 1))), MAX_SAMPLE_JSON);
        assert_eq!(sample_limit(None), MAX_SAMPLE_JSON);
    }

    #[test]
    fn decodes_what_it_claims_and_stops_at_more() {
        let data: Vec<u8> = (0..300_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let z = compress(&data);
        let mut inf = Inflater::new().expect("inflater");
        let mut out = Vec::new();
        inf.inflate("r", &z, data.len() as u64, 1 << 30, &mut out)
            .expect("exact");
        assert_eq!(out, data);
        // Claiming one byte less: stopped, and not by allocating what it holds.
        let e = inf
            .inflate("r", &z, data.len() as u64 - 1, 1 << 30, &mut out)
            .expect_err("more than claimed");
        assert!(e.to_string().contains("more than the"), "{e}");
        // Claiming more than the limit: refused before decoding.
        let e = inf
            .inflate("r", &z, 5 << 30, 1 << 20, &mut out)
            .expect_err("over the limit");
        assert!(
            e.to_string().contains("5368709120 bytes (5120.0 MiB)"),
            "{e}"
        );
        assert!(out.is_empty());
        // Cut short.
        let e = inf
            .inflate("r", &z[..z.len() / 2], data.len() as u64, 1 << 30, &mut out)
            .expect_err("truncated");
        assert!(e.to_string().contains("truncated"), "{e}");
        // Still usable after errors, with a raw-content dictionary.
        let dict = b"{\"cpu\":[1,2,3],\"name\":\"abcdefgh\"}".repeat(20);
        let zd = zstd::bulk::Compressor::with_dictionary(3, &dict)
            .and_then(|mut c| c.compress(&dict[..200]))
            .expect("compress with dictionary");
        inf.dictionary(&dict).expect("dictionary");
        inf.inflate("d", &zd, 200, 1 << 20, &mut out).expect("dict");
        assert_eq!(out, dict[..200]);
    }
}
