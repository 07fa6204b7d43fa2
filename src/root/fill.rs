//! Reading one open file whole into a reused buffer: a fresh descriptor (checked for a special
//! file) or one kept open between samples (read again from offset 0 with `pread`).

use super::{ReadError, FIRST_READ};
use std::fs;
use std::io::Read;

/// `pread` returns this for a file that cannot be read at an offset (a pipe, some special
/// procfs files): such a file is never kept.
pub(super) const ESPIPE: i32 = 29;

/// `read` returns this for a directory.
pub(super) const EISDIR: i32 = 21;

/// Where `fill` reads from.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Fresh {
    /// Just opened by path: read from where it stands, and checked for a special file.
    Opened,
    /// Kept open since an earlier read (see `kept`): read again from offset 0 with `pread`.
    Kept,
}

/// Why `fill` stopped short of a whole file.
pub(super) enum Stop {
    Io(std::io::Error),
    Not(ReadError),
}

/// Reads `file` whole into `data` (at most `cap` bytes) and says how many bytes it read.
pub(super) fn fill(
    file: &fs::File,
    data: &mut Vec<u8>,
    cap: usize,
    from: Fresh,
) -> Result<usize, Stop> {
    use std::os::unix::fs::FileExt;
    let mut len = 0;
    // `fstat` only where a special file could be: a first read that came back empty,
    // failed or filled the whole first buffer. A short first read is a sysfs or procfs
    // attribute (or a small regular file); `O_NONBLOCK` already keeps a FIFO, a socket or
    // a terminal from blocking, and the 100k small files of a big host skip one syscall. A
    // kept descriptor passed that check when it was opened.
    let mut checked = from == Fresh::Kept;
    loop {
        if len == data.len() {
            if len >= cap {
                break;
            }
            data.resize((len * 2).min(cap), 0);
        }
        // The first read asks for FIRST_READ bytes only, whatever the buffer's size: a
        // sysctl read allocates (and zeroes) a kernel buffer as large as the request.
        let want = if len == 0 { FIRST_READ } else { data.len() };
        let got = match from {
            Fresh::Opened => (&*file).read(&mut data[len..want]),
            Fresh::Kept => file.read_at(&mut data[len..want], len as u64),
        };
        if !checked && !matches!(got, Ok(n) if n > 0 && len + n < FIRST_READ) {
            checked = true;
            match file.metadata() {
                Ok(m) if m.is_file() => {}
                Ok(m) if m.is_dir() => return Err(Stop::Not(ReadError::NotAFile)),
                Ok(_) => return Err(Stop::Not(ReadError::Special)),
                Err(e) => return Err(Stop::Io(e)),
            }
        }
        match got {
            Ok(0) => break,
            Ok(n) => {
                len += n;
                // sysfs attributes, seq_file and regular files all fill the buffer as far
                // as they can, so a short first read is the whole file: that saves the
                // read() that would only return EOF, a third of the syscalls on a big
                // host's 100k small files.
                if len < FIRST_READ {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Stop::Io(e)),
        }
    }
    Ok(len)
}
