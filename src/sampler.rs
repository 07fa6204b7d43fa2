//! The one sampling clock: `batch`, `record` and the live dashboard read a sample, then wait
//! for the next tick of this clock. Deadlines, not sleeps, so the time spent reading does not
//! drift the interval; a clock that fell behind (suspended, a slow root) starts again from now
//! rather than bursting; a stop flag (signals) ends the wait within `SLICE`, or at once and with
//! no slices at all when the signals also write to a wake socket (`wake_on`, the recorder: its
//! idle wait is one blocked `read` per tick); the dashboard changes the interval through a
//! channel.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a wait looks at the stop flag.
const SLICE: Duration = Duration::from_millis(50);

pub struct Clock {
    interval: Duration,
    next: Instant,
    stop: Option<Arc<AtomicBool>>,
    /// Written to by the signal handlers that set `stop`: a wait blocks on it until the tick.
    wake: Option<UnixStream>,
    control: Option<Receiver<Duration>>,
}

impl Clock {
    /// A clock whose first tick is now (the first sample is read before the first wait).
    pub fn new(interval: Duration) -> Clock {
        Clock {
            interval,
            next: Instant::now(),
            stop: None,
            wake: None,
            control: None,
        }
    }

    /// Ends waits (and the clock) once `flag` is set, by signal handlers that also write to
    /// `wake`'s peer (`signal_hook::low_level::pipe::register`): the wait blocks on `wake`
    /// until the tick or the signal instead of looking at the flag every `SLICE`.
    pub fn wake_on(mut self, flag: Arc<AtomicBool>, wake: UnixStream) -> Clock {
        self.stop = Some(flag);
        self.wake = Some(wake);
        self
    }

    /// What ends a headless mode (`record`, `export`): SIGTERM, SIGINT or SIGHUP set the
    /// flag and write a byte to the socket returned, for `wake_on`: the idle wait between
    /// samples costs one `read`, not a wake-up every `SLICE`.
    pub fn signals() -> anyhow::Result<(Arc<AtomicBool>, UnixStream)> {
        use anyhow::Context;
        let stop = Arc::new(AtomicBool::new(false));
        let (wake, waker) = UnixStream::pair().context("wake socket")?;
        waker.set_nonblocking(true).context("wake socket")?;
        for sig in [
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register(sig, Arc::clone(&stop))
                .context("installing signal handlers")?;
            let w = waker.try_clone().context("wake socket")?;
            signal_hook::low_level::pipe::register(sig, w).context("installing signal handlers")?;
        }
        Ok((stop, wake))
    }

    /// Ends waits (and the clock) once `flag` is set, e.g. by a signal handler.
    pub fn stop_on(mut self, flag: Arc<AtomicBool>) -> Clock {
        self.stop = Some(flag);
        self
    }

    /// Takes new intervals from `rx`; the clock ends when the sender is gone.
    pub fn control(mut self, rx: Receiver<Duration>) -> Clock {
        self.control = Some(rx);
        self
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    fn stopped(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Waits for the next tick. False when the clock was stopped (the flag, or the control
    /// channel's sender gone): take no more samples.
    pub fn wait(&mut self) -> bool {
        self.next += self.interval;
        let now = Instant::now();
        if self.next < now {
            self.next = now;
        }
        loop {
            if self.stopped() {
                return false;
            }
            if let (Some(rx), Some(_)) = (&self.control, &self.wake) {
                // Waiting on the wake socket: new intervals are looked for between slices.
                match rx.try_recv() {
                    Ok(d) => {
                        self.next = self.next - self.interval + d;
                        self.interval = d;
                    }
                    Err(TryRecvError::Empty) => {}
                    Err(TryRecvError::Disconnected) => return false,
                }
            }
            let left = self.next.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            if let Some(wake) = &mut self.wake {
                // A byte: a signal came (the flag says whether it stops us); a timeout: the
                // tick (or, with a control channel, a slice). An error (it cannot be set up):
                // fall back to slices.
                let wait = if self.control.is_some() {
                    left.min(SLICE)
                } else {
                    left
                };
                let got = wake
                    .set_read_timeout(Some(wait))
                    .and_then(|()| wake.read(&mut [0u8; 16]));
                match got {
                    Ok(_) => continue,
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock
                                | std::io::ErrorKind::TimedOut
                                | std::io::ErrorKind::Interrupted
                        ) =>
                    {
                        continue
                    }
                    Err(_) => self.wake = None,
                }
            }
            let slice = if self.stop.is_some() {
                left.min(SLICE)
            } else {
                left
            };
            match &self.control {
                Some(rx) => match rx.recv_timeout(slice) {
                    Ok(d) => {
                        // New interval: the next tick is one new interval after the last one.
                        self.next = self.next - self.interval + d;
                        self.interval = d;
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return false,
                },
                None => std::thread::sleep(slice),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_keep_to_the_grid_and_stop() {
        let started = Instant::now();
        let mut c = Clock::new(Duration::from_millis(20));
        for _ in 0..3 {
            // Work shorter than the interval does not push the next tick later.
            std::thread::sleep(Duration::from_millis(5));
            assert!(c.wait());
        }
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(60), "{took:?}");
        assert!(took < Duration::from_millis(60 + 15 * 3 + 100), "{took:?}");

        let flag = Arc::new(AtomicBool::new(true));
        let mut c = Clock::new(Duration::from_secs(60)).stop_on(flag);
        assert!(!c.wait(), "a set stop flag ends the wait at once");
    }

    #[test]
    fn a_wake_socket_waits_whole_ticks_and_ends_at_once() {
        let (rx, tx) = UnixStream::pair().expect("socket pair");
        let flag = Arc::new(AtomicBool::new(false));
        let mut c = Clock::new(Duration::from_millis(30)).wake_on(Arc::clone(&flag), rx);
        let started = Instant::now();
        assert!(c.wait());
        assert!(c.wait());
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(60), "{took:?}");
        // A signal: the flag set, then a byte written.
        let mut c = c;
        c.interval = Duration::from_secs(60);
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            flag.store(true, Ordering::Relaxed);
            let mut tx = tx;
            std::io::Write::write_all(&mut tx, b"x").expect("wake");
        });
        let started = Instant::now();
        assert!(!c.wait(), "the signal stops the clock");
        assert!(started.elapsed() < Duration::from_secs(5));
        waker.join().expect("waker");
    }

    #[test]
    fn interval_changes_apply_from_the_last_tick() {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut c = Clock::new(Duration::from_secs(60)).control(rx);
        let started = Instant::now();
        assert!(tx.send(Duration::from_millis(10)).is_ok());
        assert!(c.wait());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(c.interval(), Duration::from_millis(10));
        drop(tx);
        let (tx, rx) = std::sync::mpsc::channel::<Duration>();
        drop(tx);
        let mut c = Clock::new(Duration::from_secs(60)).control(rx);
        assert!(!c.wait(), "the sender gone ends the clock");
    }

    /// `perftop stream` waits on the wake socket and takes the dashboard's `+`/`-` from a
    /// control channel: a change reaches a clock waiting on the socket (it used to wait the
    /// whole 60 s).
    #[test]
    fn interval_changes_reach_a_clock_waiting_on_its_wake_socket() {
        let (_keep, wake) = UnixStream::pair().expect("socket pair");
        let (tx, rx) = std::sync::mpsc::channel();
        let flag = Arc::new(AtomicBool::new(false));
        let mut c = Clock::new(Duration::from_secs(60))
            .wake_on(flag, wake)
            .control(rx);
        let started = Instant::now();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            tx.send(Duration::from_millis(10)).is_ok()
        });
        assert!(c.wait());
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(c.interval(), Duration::from_millis(10));
        assert!(sender.join().expect("sender"));
    }
}
