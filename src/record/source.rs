//! Where a segment's bytes live, and the scan's window over them. A recording is never read
//! whole: a sparse 3 GB file cost `dump` 3.1 GB when it was. The scan reads a segment through
//! a window of about a MiB (a frame's payload is at most 64 MiB, so that is the most it ever
//! holds) and skips the holes of a sparse file; a sample's record is read again, with `pread`,
//! when it is decoded. So memory follows the records' real sizes, not the file's.

use super::format::SYNC;
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;

/// The bytes the scan reads at a time (more only for a frame larger than this).
const CHUNK: usize = 1 << 20;

/// A segment's bytes: an open file (its length when opened; a recorder may still be appending,
/// and what it adds later is not part of this reading), or bytes handed over in memory.
#[derive(Debug, Clone)]
pub(super) enum Source {
    File { file: Arc<File>, len: u64 },
    Bytes(Arc<Vec<u8>>),
}

impl Source {
    /// Opens a segment file without ever blocking (a FIFO with no writer would block `open`, a
    /// FIFO or terminal `read`), and only a regular file: nothing else can be read by offset.
    pub fn open(path: &Path) -> io::Result<Source> {
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags.bits() as i32)
            .open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
        Ok(Source::File {
            file: Arc::new(file),
            len: meta.len(),
        })
    }

    pub fn len(&self) -> u64 {
        match self {
            Source::File { len, .. } => *len,
            Source::Bytes(b) => b.len() as u64,
        }
    }

    /// Fills `buf` with the bytes at `off` (an error when the segment ends before).
    pub fn read_at(&self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        let short = || {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file is shorter than it was",
            )
        };
        match self {
            Source::File { file, len } => {
                if off.saturating_add(buf.len() as u64) > *len {
                    return Err(short());
                }
                file.read_exact_at(buf, off)
            }
            Source::Bytes(b) => {
                let src = usize::try_from(off)
                    .ok()
                    .and_then(|o| b.get(o..o.checked_add(buf.len())?))
                    .ok_or_else(short)?;
                buf.copy_from_slice(src);
                Ok(())
            }
        }
    }

    /// The first offset at or after `off` that is not in a hole of a sparse file (`off` itself
    /// where the filesystem does not say); `None` when only a hole follows.
    fn next_data(&self, off: u64) -> Option<u64> {
        match self {
            Source::File { file, .. } => {
                match rustix::fs::seek(&**file, rustix::fs::SeekFrom::Data(off)) {
                    Ok(d) => Some(d.max(off)),
                    Err(rustix::io::Errno::NXIO) => None,
                    Err(_) => Some(off),
                }
            }
            Source::Bytes(_) => Some(off),
        }
    }
}

/// The scan's view of a segment: the bytes around the frame being read.
pub(super) struct Window<'a> {
    src: &'a Source,
    buf: Vec<u8>,
    /// The offset of `buf[0]`.
    at: u64,
}

impl<'a> Window<'a> {
    pub fn new(src: &'a Source) -> Window<'a> {
        Window {
            src,
            buf: Vec::new(),
            at: 0,
        }
    }

    /// Up to `n` bytes at `off` (fewer where the segment ends).
    pub fn get(&mut self, off: u64, n: usize) -> io::Result<&[u8]> {
        let len = self.src.len();
        let end = off.saturating_add(n as u64).min(len);
        let n = usize::try_from(end.saturating_sub(off)).unwrap_or(0);
        if let Source::Bytes(b) = self.src {
            // Already in memory: no copy.
            return Ok(usize::try_from(off)
                .ok()
                .and_then(|o| b.get(o..o + n))
                .unwrap_or_default());
        }
        let held = self.at + self.buf.len() as u64;
        if off < self.at || end > held {
            let want = usize::try_from((len - off.min(len)).min(n.max(CHUNK) as u64)).unwrap_or(n);
            if self.buf.capacity() > 2 * CHUNK && want <= CHUNK {
                // A large frame passed: give its memory back.
                self.buf = Vec::new();
            }
            self.buf.clear();
            self.buf.resize(want, 0);
            self.at = off;
            if let Err(e) = self.src.read_at(off, &mut self.buf) {
                self.buf.clear();
                return Err(e);
            }
        }
        let from = usize::try_from(off - self.at).unwrap_or(0);
        Ok(self.buf.get(from..from + n).unwrap_or_default())
    }

    /// The offset of the next `SYNC` at or after `from`, skipping the holes of a sparse file.
    pub fn find_sync(&mut self, from: u64) -> io::Result<Option<u64>> {
        let len = self.src.len();
        let mut p = from;
        while p < len {
            p = match self.src.next_data(p) {
                Some(d) => d,
                None => return Ok(None),
            };
            let chunk = self.get(p, CHUNK)?;
            if let Some(i) = chunk.windows(SYNC.len()).position(|w| w == SYNC) {
                return Ok(Some(p + i as u64));
            }
            if chunk.len() < SYNC.len() || p + chunk.len() as u64 >= len {
                return Ok(None);
            }
            // The last 3 bytes may start a SYNC that the next chunk completes.
            p += (chunk.len() - (SYNC.len() - 1)) as u64;
        }
        Ok(None)
    }
}
