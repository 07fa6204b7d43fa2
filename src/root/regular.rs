//! Files perftop was pointed at (config, theme, recording, snapshot) and the one way every
//! file is opened: never blocking on a FIFO or a terminal.

use std::fs;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens `path` for reading without ever blocking: a FIFO with no writer would block `open`
/// (and a FIFO or terminal would block `read`) forever.
pub(super) fn open_nonblocking(path: &Path) -> std::io::Result<fs::File> {
    let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
}

/// Reads a file perftop was pointed at (config, theme, recording segment, snapshot): refuses
/// anything but a regular file (a FIFO would hang the read) and files over `max` bytes.
pub fn read_regular_file(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > max {
        return Err(std::io::Error::other(format!(
            "{} bytes, larger than the {} MiB perftop reads",
            meta.len(),
            max >> 20
        )));
    }
    let mut data = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut data)?;
    if data.len() as u64 > max {
        return Err(std::io::Error::other(format!(
            "larger than the {} MiB perftop reads",
            max >> 20
        )));
    }
    Ok(data)
}

/// `read_regular_file` as text (UTF-8 required: config and theme files are TOML).
pub fn read_regular_text(path: &Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read_regular_file(path, max)?)
        .map_err(|_| std::io::Error::other("not UTF-8 text"))
}
