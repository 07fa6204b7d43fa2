//! The terminal: raw mode and the alternate screen, always restored (normal exit, panic,
//! signals, suspend), and a frame writer that sends each frame as one write wrapped in
//! synchronized-output markers and counts the bytes (what a slow SSH link pays for).

use anyhow::{Context, Result};
use ratatui::crossterm::{
    cursor, execute,
    terminal::{self, EnterAlternateScreen, LeaveAlternateScreen},
};
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// DEC mode 2026: the terminal shows the frame only when it is complete (no tearing).
const BEGIN_SYNC: &[u8] = b"\x1b[?2026h";
const END_SYNC: &[u8] = b"\x1b[?2026l";

/// Collects a frame and writes it with one `write` on flush.
pub struct FrameWriter<W: Write> {
    buf: Vec<u8>,
    frame: Vec<u8>,
    out: W,
    bytes: Arc<AtomicU64>,
    frames: Arc<AtomicU64>,
}

impl<W: Write> FrameWriter<W> {
    pub fn new(out: W) -> FrameWriter<W> {
        FrameWriter {
            buf: Vec::with_capacity(16 * 1024),
            frame: Vec::with_capacity(16 * 1024),
            out,
            bytes: Arc::new(AtomicU64::new(0)),
            frames: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Total bytes and frames written so far (shared counters).
    pub fn counters(&self) -> (Arc<AtomicU64>, Arc<AtomicU64>) {
        (self.bytes.clone(), self.frames.clone())
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> Write for FrameWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        // The frame is put together in `frame`, kept from frame to frame: a new buffer of a
        // frame's size each frame was an allocation large enough for glibc to consolidate
        // its free lists.
        self.frame.clear();
        self.frame.extend_from_slice(BEGIN_SYNC);
        self.frame.extend_from_slice(&self.buf);
        self.frame.extend_from_slice(END_SYNC);
        self.buf.clear();
        self.out.write_all(&self.frame)?;
        self.out.flush()?;
        self.bytes
            .fetch_add(self.frame.len() as u64, Ordering::Relaxed);
        self.frames.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Puts the terminal in raw mode on the alternate screen; restores it when dropped.
pub struct TerminalGuard;

impl TerminalGuard {
    pub fn enter() -> Result<TerminalGuard> {
        install_panic_hook();
        enter().context("setting up the terminal")?;
        Ok(TerminalGuard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

fn enter() -> io::Result<()> {
    terminal::enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    // Mouse reporting stays off: text stays selectable for pasting into a ticket.
    execute!(io::stdout(), EnterAlternateScreen, cursor::Hide)
}

/// Leaves the alternate screen and raw mode. Safe to call twice (panic hook, then drop).
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let mut out = io::stdout();
        let _ = out.write_all(END_SYNC);
        // Clear the alternate screen first: some terminals (tmux 3.3 after a resize) otherwise
        // leave dashboard lines on the normal screen.
        let _ = execute!(
            out,
            terminal::Clear(terminal::ClearType::All),
            cursor::MoveTo(0, 0),
            LeaveAlternateScreen,
            cursor::Show
        );
        let _ = terminal::disable_raw_mode();
    }
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            prev(info);
        }));
    });
}

/// Ctrl-Z: give the terminal back, stop until `fg`, then take it again.
pub fn suspend() -> Result<()> {
    restore();
    let me = rustix::process::getpid();
    rustix::process::kill_process(me, rustix::process::Signal::TSTP).context("suspending")?;
    // Execution continues here after SIGCONT.
    enter().context("resuming the terminal")
}

/// Clears the screen and forgets the last frame so the next draw sends everything. (Terminal::
/// clear would ask the terminal for the cursor position, racing the input thread for the reply.)
pub fn repaint<B: ratatui::backend::Backend>(
    terminal: &mut ratatui::Terminal<B>,
) -> Result<(), B::Error> {
    terminal
        .backend_mut()
        .clear_region(ratatui::backend::ClearType::All)?;
    // Each swap resets the buffer it leaves behind: two swaps reset both.
    terminal.swap_buffers();
    terminal.swap_buffers();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_synchronized_write_per_flush() {
        let mut w = FrameWriter::new(Vec::new());
        let (bytes, frames) = w.counters();
        w.write_all(b"abc").expect("write");
        w.write_all(b"def").expect("write");
        w.flush().expect("flush");
        w.flush().expect("empty flush writes nothing");
        assert_eq!(frames.load(Ordering::Relaxed), 1);
        assert_eq!(bytes.load(Ordering::Relaxed), 6 + 16);
        assert_eq!(w.into_inner(), b"\x1b[?2026habcdef\x1b[?2026l".to_vec());
    }
}
