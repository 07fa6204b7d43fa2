//! What the dashboard's event loop receives, and the threads that send it: the sampler (or
//! the link of `perftop ssh`, through a `Feed`), the input reader and the signal catcher.

use crate::record::stream::Streamed;
use crate::sample::Sample;
use crate::source::Reader;
use anyhow::{Context, Result};
use ratatui::crossterm::event::{self, Event};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// How the dashboard ended: `q`, or a signal (SIGTERM, SIGHUP — also stdin gone — SIGINT,
/// SIGQUIT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Quit,
    Signal(i32),
}

impl Ended {
    /// The process exit status: 0 after `q`, 128 + the signal's number after a signal, as a
    /// shell reports a process that a signal ended (143 for SIGTERM, 129 for SIGHUP), so a
    /// supervisor or script can tell a kill from a quit.
    pub fn exit_code(self) -> u8 {
        match self {
            Ended::Quit => 0,
            Ended::Signal(sig) => u8::try_from(128 + sig.clamp(1, 127)).unwrap_or(u8::MAX),
        }
    }
}

pub(super) enum Msg {
    Sample(Box<Sample>),
    /// A remote host's sample with its frame, for the one dashboard of `perftop ssh HOST`.
    Streamed(Box<Streamed>),
    /// Every process, after the sample it was listed with (only while the UI asks).
    Everyone(Box<crate::source::processes::everyone::Everyone>),
    /// A sample of host `.0` of the fleet screen, and that host's link state.
    HostSample(usize, Box<Streamed>),
    HostLink(usize, Option<String>),
    /// The state of the link samples come over (`perftop ssh`): None once they flow.
    Link(Option<String>),
    Input(Event),
    Signal(i32),
    /// A replay's episodes, read on a thread when it opened (`ui::episodes`).
    Episodes(Result<Vec<crate::explain::brief::Brief>, String>),
}

/// What feeds a dashboard whose samples come from elsewhere (`perftop ssh`): each call says
/// whether the dashboard is still there to take it.
#[derive(Clone)]
pub struct Feed {
    pub(super) tx: Sender<Msg>,
    /// The host's row on the fleet screen; None: the one dashboard.
    pub(super) host: Option<usize>,
}

impl Feed {
    pub fn sample(&self, s: Box<Streamed>) -> bool {
        let m = match self.host {
            Some(i) => Msg::HostSample(i, s),
            None => Msg::Streamed(s),
        };
        self.tx.send(m).is_ok()
    }

    /// `Some(text)`: the link is down (the header says `text`); `None`: samples flow again.
    pub fn link(&self, state: Option<String>) -> bool {
        let m = match self.host {
            Some(i) => Msg::HostLink(i, state),
            None => Msg::Link(state),
        };
        self.tx.send(m).is_ok()
    }
}

/// The longest the sampler holds a big host's complete first sample for the first frame.
const FIRST_FRAME_WAIT: Duration = Duration::from_secs(1);

/// Reads a sample on every tick of the sampling clock; the UI changes the interval through
/// `ctl`, and the thread ends when the UI is gone.
pub(super) fn spawn_sampler(
    mut reader: Reader,
    interval: Duration,
    tx: Sender<Msg>,
    ctl: Receiver<Duration>,
    drawn: Receiver<()>,
) -> Result<()> {
    std::thread::Builder::new()
        .name("sampler".into())
        .spawn(move || {
            let mut clock = crate::sampler::Clock::new(interval).control(ctl);
            // Headlines first: on a big host the first frame comes from a look without the
            // per-CPU detail, and the complete sample is read right after it.
            let mut first = true;
            loop {
                let sample = Box::new(match std::mem::take(&mut first) {
                    true => reader.first_look(),
                    false => reader.sample(),
                });
                let pending = sample.cpu.detail_pending;
                if tx.send(Msg::Sample(sample)).is_err() {
                    return;
                }
                if let Some(e) = reader.take_everyone() {
                    if tx.send(Msg::Everyone(Box::new(e))).is_err() {
                        return;
                    }
                }
                if pending {
                    // The complete sample's reader threads would take both CPUs of a small
                    // VM from the UI thread still drawing the first frame: wait for it (a
                    // second at most, should the screen be slow to say so).
                    let _ = drawn.recv_timeout(FIRST_FRAME_WAIT);
                } else if !clock.wait() {
                    return;
                }
            }
        })
        .context("starting the sampler thread")?;
    Ok(())
}

pub(super) fn spawn_input(tx: Sender<Msg>) -> Result<()> {
    std::thread::Builder::new()
        .name("input".into())
        .spawn(move || loop {
            match event::read() {
                Ok(ev) => {
                    if tx.send(Msg::Input(ev)).is_err() {
                        return;
                    }
                }
                Err(_) => {
                    // stdin is gone (SSH dropped): treat as hang-up.
                    let _ = tx.send(Msg::Signal(signal_hook::consts::SIGHUP));
                    return;
                }
            }
        })
        .context("starting the input thread")?;
    Ok(())
}

/// The signals a person, a shell or a supervisor ends a program with are caught, so the
/// terminal is given back first (an uncaught `kill -QUIT` dumped core and left it on the
/// alternate screen in raw mode); SIGCONT repaints after a stop.
pub(super) fn spawn_signals(tx: Sender<Msg>) -> Result<()> {
    use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals =
        signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGCONT])
            .context("installing signal handlers")?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if tx.send(Msg::Signal(sig)).is_err() {
                    return;
                }
            }
        })
        .context("starting the signal thread")?;
    Ok(())
}

/// The next message, waiting until `wake` (or for as long as it takes without one): `Some(None)`
/// when `wake` came first, `None` once every sender is gone (the dashboard then ends).
pub(super) fn next_message(rx: &Receiver<Msg>, wake: Option<Instant>) -> Option<Option<Msg>> {
    match wake {
        Some(due) => match rx.recv_timeout(due.saturating_duration_since(Instant::now())) {
            Ok(m) => Some(Some(m)),
            Err(RecvTimeoutError::Timeout) => Some(None),
            Err(RecvTimeoutError::Disconnected) => None,
        },
        None => rx.recv().ok().map(Some),
    }
}
