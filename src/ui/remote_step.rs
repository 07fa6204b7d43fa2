//! A remote tweak step in flight: the one `ssh` it takes (up to `ANSWER_WITHIN`, 30 s) runs on a
//! thread of its own, so the dashboard keeps drawing and taking samples meanwhile, and says
//! `running on HOST: …` on the status line; the answer is turned into the dialog or the status
//! line it makes when it arrives (`remote_tweak::RemoteTweaks::answered`). One step at a time:
//! a key that would start another is refused while one runs.

use super::remote_tweak::{Request, Then};
use crate::remote::tweak::{Answer, Remote, ANSWER_WITHIN};
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// How often the event loop looks for the answer while a step runs (and moves its seconds).
pub const POLL: Duration = Duration::from_millis(200);

/// What a look at the step in flight found.
pub enum Polled {
    /// Still running: the status line's words for it.
    Running(String),
    /// Answered: the status line the answer made (its dialog is open).
    Answered(Option<String>),
}

/// A step running on its thread.
#[derive(Debug)]
pub struct Running {
    pub host: String,
    pub what: String,
    pub then: Then,
    since: Instant,
    rx: Receiver<Answer>,
}

impl Running {
    /// Starts `req` on `remote` on a thread of its own.
    pub fn start(remote: &Remote, req: Request) -> Running {
        let (tx, rx) = channel();
        let r = remote.clone();
        let args = req.args.clone();
        let spawned = std::thread::Builder::new()
            .name("remote tweak".into())
            .spawn(move || {
                let words: Vec<&str> = args.iter().map(String::as_str).collect();
                // The dashboard may have gone meanwhile: nobody to tell.
                let _ = tx.send(r.run(&words, ANSWER_WITHIN));
            });
        if let Err(e) = spawned {
            // No thread, no step: said as the answer, at once.
            let (tx, now) = channel();
            let _ = tx.send(Answer::Lost(format!("starting the remote step: {e}")));
            return Running::with(remote, req, now);
        }
        Running::with(remote, req, rx)
    }

    fn with(remote: &Remote, req: Request, rx: Receiver<Answer>) -> Running {
        Running {
            host: remote.target.label(),
            what: req.what,
            then: req.then,
            since: Instant::now(),
            rx,
        }
    }

    /// The answer once it has come.
    pub fn answer(&self) -> Option<Answer> {
        match self.rx.try_recv() {
            Ok(a) => Some(a),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Answer::Lost(format!(
                "{}: the remote step ended without an answer",
                self.host
            ))),
        }
    }

    /// The status line while it runs: `running on HOST: WHAT (N s)…`.
    pub fn label(&self, now: Instant) -> String {
        format!(
            "running on {}: {} ({} s)…",
            self.host,
            self.what,
            now.saturating_duration_since(self.since).as_secs()
        )
    }

    /// Why a key that would start another step is refused.
    pub fn busy(&self) -> String {
        format!(
            "{}: still running {} there; one remote step at a time (its answer comes within {} s)",
            self.host,
            self.what,
            ANSWER_WITHIN.as_secs()
        )
    }
}
