//! The live dashboard: a sampler thread, an input thread and a signal thread feed one channel;
//! the screen is redrawn only on new data, input or resize — never on a blind timer.

pub mod app;
pub mod ascii;
mod bounded;
pub mod colors;
pub mod dialog_box;
pub mod episodes;
pub mod events;
pub mod filter;
pub mod findings_list;
pub mod fleet;
pub mod header_row;
pub mod help;
pub mod history;
#[cfg(test)]
mod import_graph;
pub mod judge;
pub mod keymap;
pub mod knob_menu;
pub mod layout;
pub mod line_edit;
pub mod oom;
pub mod paint;
pub mod panes;
pub mod prefs;
pub mod prompt;
pub mod remote_dialog_view;
pub mod remote_knobs;
pub mod remote_step;
pub mod remote_tweak;
pub mod render;
pub mod ring;
pub mod scroll;
pub mod selfcost;
pub mod session;
pub mod spans;
pub mod status;
pub mod stream_ring;
pub mod term;
pub mod theme;
pub mod timeline;
pub mod timeline_bar;
pub mod timeline_row;
pub mod trend;
pub mod tweak_dialog;
pub mod tweak_effect;
pub mod tweak_preview;
pub mod wire;
pub mod wrap;
pub mod zoom;

use crate::root::Root;
use crate::source::Reader;
use anyhow::{bail, Context, Result};
use app::{App, Effect};
use events::{spawn_input, spawn_sampler, spawn_signals, Msg};
pub use events::{Ended, Feed};
use ratatui::crossterm::event::{Event, KeyEventKind};
use ratatui::Terminal;
use std::io::IsTerminal;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};
use theme::{ColorDepth, GlyphSet, Theme};

/// How the dashboard looks and judges, live or in replay.
#[derive(Debug, Clone, Default)]
pub struct Look {
    /// Theme name or .toml path.
    pub theme: String,
    /// `--color` and `--glyphs` (None: detect from the environment).
    pub color: Option<String>,
    pub glyphs: Option<String>,
    pub thresholds: crate::findings::Thresholds,
    /// `j`/`J` step.
    pub jump: Duration,
}

impl Look {
    /// Theme from the options and the environment (NO_COLOR, COLORTERM, TERM, locale).
    pub fn theme(&self) -> Result<Theme> {
        let env = |k: &str| std::env::var(k).ok();
        let depth = ColorDepth::detect(self.color.as_deref(), &env)?;
        let glyphs = GlyphSet::detect(self.glyphs.as_deref(), &env)?;
        Theme::load(&self.theme, depth, glyphs)
    }
}

pub struct Options {
    pub root: Root,
    pub interval: Duration,
    pub keep: Duration,
    pub look: Look,
    /// `--read-only`: every tweak disabled.
    pub read_only: bool,
    /// Tweak state directory (`--state-dir`; default /run/perftop).
    pub state_dir: Option<std::path::PathBuf>,
    /// Where `R` writes recordings.
    pub record_dir: std::path::PathBuf,
}

/// `perftop replay`: the recording, and where to start.
pub struct ReplayOptions {
    pub path: std::path::PathBuf,
    /// `--at`: a time in the forms `b` takes.
    pub at: Option<String>,
    pub speed: f64,
    pub look: Look,
}

fn need_terminal(pipe_hint: &str) -> Result<()> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        bail!("the dashboard needs a terminal; for pipes use `{pipe_hint}`");
    }
    Ok(())
}

/// Opens a recording for replay: the app stopped on `--at` (or the first sample), and the
/// reader's warnings about damaged parts, for the status line.
pub fn replay_app(opts: &ReplayOptions) -> Result<App> {
    let rec = crate::record::Recording::open(&opts.path)?;
    if rec.is_empty() {
        let why = rec
            .warnings
            .first()
            .map(|w| format!(" ({w})"))
            .unwrap_or_default();
        bail!(
            "{}: the recording holds no complete sample{why}",
            opts.path.display()
        );
    }
    let first = rec.samples.first().map_or(0, |s| s.wall_ms);
    let last = rec.samples.last().map_or(0, |s| s.wall_ms);
    let at = match &opts.at {
        Some(t) => {
            let t = crate::record::parse_time(t, first, last)?;
            if t < first || t > last {
                bail!(
                    "--at {} is outside the recording ({} .. {})",
                    crate::record::format_clock(t),
                    crate::record::format_rfc3339(first),
                    crate::record::format_rfc3339(last)
                );
            }
            rec.seek(t)
        }
        None => 0,
    };
    let warnings = rec.warnings.clone();
    let mut app = App::replay(rec, opts.path.display().to_string(), at);
    app.set_thresholds(opts.look.thresholds.clone());
    // The file name only: the path was typed by the user and would crowd the row.
    let name = opts.path.file_name().map_or_else(
        || opts.path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    app.session.privilege = format!("replay {name} · tweaks off");
    app.time.speed = opts.speed;
    app.time.jump = opts.look.jump;
    if let Some(w) = warnings.first() {
        app.status.text = Some(if warnings.len() == 1 {
            w.clone()
        } else {
            format!(
                "{w} (+{} more warnings; perftop dump lists them)",
                warnings.len() - 1
            )
        });
    }
    Ok(app)
}

pub fn run_replay(opts: ReplayOptions) -> Result<Ended> {
    let theme = opts.look.theme()?;
    let mut app = replay_app(&opts)?;
    need_terminal("perftop dump")?;
    let (tx, rx) = mpsc::channel::<Msg>();
    // The episodes list (`E`): the whole recording walked once, off the UI thread.
    app.episodes.state = episodes::State::Reading;
    let (path, t, episodes_tx) = (opts.path.clone(), app.judge.thresholds.clone(), tx.clone());
    std::thread::Builder::new()
        .name("episodes".into())
        .spawn(move || {
            let _ = episodes_tx.send(Msg::Episodes(episodes::read(&path, &t)));
        })
        .context("starting the episodes reader")?;
    // Replay has no sampler: the interval control goes nowhere.
    let (ctl_tx, _) = mpsc::channel::<Duration>();
    spawn_input(tx.clone())?;
    spawn_signals(tx)?;
    drive(&mut app, &theme, &rx, &ctl_tx)
}

/// Takes the terminal, runs the event loop, and gives the terminal back (also on error).
fn drive(
    app: &mut App,
    theme: &Theme,
    rx: &Receiver<Msg>,
    ctl: &Sender<Duration>,
) -> Result<Ended> {
    let guard = term::TerminalGuard::enter()?;
    let backend = wire::Wire::new(term::FrameWriter::new(std::io::stdout()), theme.depth);
    let mut terminal = Terminal::new(backend).context("starting the terminal backend")?;
    term::repaint(&mut terminal).context("clearing the screen")?;
    let result = event_loop(&mut terminal, app, theme, rx, ctl);
    drop(terminal);
    drop(guard);
    result
}

/// The live app every live dashboard starts from: history, `R` directory, jump, thresholds.
fn live_app(opts: &Options) -> App {
    let mut app = App::new(opts.interval, opts.keep);
    app.session.record_dir = opts.record_dir.clone();
    app.time.jump = opts.look.jump;
    app.set_thresholds(opts.look.thresholds.clone());
    app
}

/// The dashboard of a remote host (`perftop ssh`): a live one whose history keeps the frames
/// the host's stream sends (`stream_ring`), as many samples as the local ring would keep.
pub fn remote_app(opts: &Options) -> App {
    let mut app = live_app(opts);
    let keep = match &app.time.history {
        history::History::Live(r) => r.capacity(),
        _ => 2,
    };
    app.time.history = history::History::Stream(stream_ring::StreamRing::new(
        keep,
        ring::DEFAULT_BUDGET_BYTES,
    ));
    app
}

/// The dashboard of a remote host: `start` is given the feed and starts what reads the host
/// (its own threads). `host` names the host in the header; the tweak keys act on `remote`.
pub fn run_fed(
    opts: Options,
    host: String,
    remote: crate::remote::tweak::Remote,
    start: impl FnOnce(Feed, mpsc::Receiver<Duration>) -> Result<()>,
) -> Result<Ended> {
    need_terminal("ssh HOST perftop batch")?;
    let theme = opts.look.theme()?;
    let mut app = remote_app(&opts);
    app.session.privilege = format!("ssh {host}");
    app.session.link = Some("connecting".into());
    app.tweaks.remote = Some(remote_tweak::RemoteTweaks { remote });
    let (tx, rx) = mpsc::channel::<Msg>();
    // `+`/`-`: `start` hands the new interval to the remote sampler.
    let (ctl_tx, ctl_rx) = mpsc::channel::<Duration>();
    start(
        Feed {
            tx: tx.clone(),
            host: None,
        },
        ctl_rx,
    )?;
    spawn_input(tx.clone())?;
    spawn_signals(tx)?;
    let result = drive(&mut app, &theme, &rx, &ctl_tx);
    if let Some(msg) = app.stop_recording() {
        eprintln!("{}", crate::safe::text(&msg));
    }
    result
}

/// The fleet screen (`perftop ssh H1 H2 ...`): one live dashboard per host of `labels`, fed
/// through the feeds `start` is given (one per host, in order), each with the channel on which
/// that host's `+`/`-` hand its new interval to the remote sampler; each host's tweak keys act
/// on its `remotes` entry.
pub fn run_fleet(
    opts: Options,
    labels: Vec<String>,
    remotes: Vec<crate::remote::tweak::Remote>,
    start: impl FnOnce(Vec<(Feed, mpsc::Receiver<Duration>)>) -> Result<()>,
) -> Result<Ended> {
    need_terminal("ssh HOST perftop batch")?;
    let theme = opts.look.theme()?;
    let mut apps: Vec<App> = labels
        .iter()
        .zip(remotes)
        .map(|(l, remote)| {
            let mut app = remote_app(&opts);
            app.session.privilege = format!("ssh {l} · Esc: the fleet");
            app.session.link = Some("connecting".into());
            app.tweaks.remote = Some(remote_tweak::RemoteTweaks { remote });
            app
        })
        .collect();
    let (tx, rx) = mpsc::channel::<Msg>();
    let (ctls, ctl_rxs): (Vec<_>, Vec<_>) = (0..labels.len())
        .map(|_| mpsc::channel::<Duration>())
        .unzip();
    let feeds = ctl_rxs
        .into_iter()
        .enumerate()
        .map(|(i, ctl)| {
            let feed = Feed {
                tx: tx.clone(),
                host: Some(i),
            };
            (feed, ctl)
        })
        .collect();
    start(feeds)?;
    spawn_input(tx.clone())?;
    spawn_signals(tx)?;
    let result = fleet::run(&mut apps, &labels, &theme, &rx, &ctls);
    for app in &mut apps {
        if let Some(msg) = app.stop_recording() {
            eprintln!("{}", crate::safe::text(&msg));
        }
    }
    result
}

pub fn run(opts: Options) -> Result<Ended> {
    need_terminal("perftop batch")?;
    let theme = opts.look.theme()?;
    let mut app = live_app(&opts);
    app.session.privilege = header_row::privilege(rustix::process::geteuid().is_root());
    // Tweaks stay applied when perftop exits (journal in /run/perftop; `perftop tweak undo`).
    let mut tweak_ctx = crate::tweak::Ctx::new(opts.root.clone(), opts.state_dir.clone());
    tweak_ctx.read_only = opts.read_only;
    app.tweaks.ctx = Some(tweak_ctx);
    if !opts.root.is_live() {
        app.session.root_label = Some(opts.root.base().display().to_string());
    }

    let (tx, rx) = mpsc::channel::<Msg>();
    let (ctl_tx, ctl_rx) = mpsc::channel::<Duration>();
    let mut reader = Reader::new(opts.root.clone());
    app.want = Some(reader.want_everyone());
    let (drawn_tx, drawn_rx) = mpsc::channel::<()>();
    app.first_frame = Some(drawn_tx);
    spawn_sampler(reader, opts.interval, tx.clone(), ctl_rx, drawn_rx)?;
    spawn_input(tx.clone())?;
    spawn_signals(tx)?;
    let result = drive(&mut app, &theme, &rx, &ctl_tx);
    // After the terminal is back, so the message stays on screen.
    if let Some(msg) = app.stop_recording() {
        eprintln!("{}", crate::safe::text(&msg));
    }
    result
}

fn event_loop(
    terminal: &mut Terminal<wire::Wire<term::FrameWriter<std::io::Stdout>>>,
    app: &mut App,
    theme: &Theme,
    rx: &Receiver<Msg>,
    ctl: &Sender<Duration>,
) -> Result<Ended> {
    // Replay has its first frame before any message arrives.
    terminal
        .draw(|f| render::draw(f, app, theme))
        .context("drawing")?;
    // Replay playback steps on its own clock; live mode only ever waits for messages.
    let mut next_step: Option<Instant> = None;
    loop {
        next_step = match (app.time.next_tick(), next_step) {
            (Some(period), due) => Some(due.unwrap_or_else(|| Instant::now() + period)),
            (None, _) => None,
        };
        // Wake for the next playback step or for the footer message to go, whichever is first.
        let wake = [
            next_step,
            app.status.deadline(),
            app.tweaks.remote_deadline(Instant::now()),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(first) = events::next_message(rx, wake) else {
            return Ok(Ended::Quit);
        };
        let mut redraw = false;
        let mut repaint = false;
        if let (Some(period), Some(due)) = (app.time.next_tick(), next_step) {
            if Instant::now() >= due {
                next_step = Some(Instant::now() + period);
                redraw |= app.on_tick() != Effect::None;
            }
        }
        // Handle everything already queued before drawing once.
        for msg in first.into_iter().chain(rx.try_iter()) {
            match msg {
                Msg::Sample(s) => {
                    app.push_sample(*s);
                    app.session.self_cost.update();
                    redraw = true;
                }
                Msg::Streamed(s) => {
                    app.push_streamed(s);
                    app.session.self_cost.update();
                    redraw = true;
                }
                Msg::Everyone(e) => app.everyone = Some(*e),
                Msg::Episodes(read) => {
                    app.episodes.state = match read {
                        Ok(list) => episodes::State::Ready(list),
                        Err(why) => episodes::State::Failed(why),
                    };
                    redraw = true;
                }
                Msg::Link(state) => {
                    app.session.link = state;
                    redraw = true;
                }
                // The fleet screen's: not sent to one dashboard.
                Msg::HostSample(..) | Msg::HostLink(..) => {}
                Msg::Input(Event::Key(k)) if k.kind != KeyEventKind::Release => {
                    let effect = app.key(k);
                    // The message a key leaves gets its full time on the footer.
                    app.status.keyed(Instant::now());
                    match effect {
                        Effect::None => {}
                        Effect::Redraw => redraw = true,
                        Effect::Repaint => repaint = true,
                        Effect::Quit => return Ok(Ended::Quit),
                        Effect::IntervalChanged => {
                            let _ = ctl.send(app.time.interval);
                            redraw = true;
                        }
                        Effect::Suspend => {
                            term::suspend()?;
                            repaint = true;
                        }
                    }
                }
                Msg::Input(Event::Resize(_, _)) => {
                    terminal.backend().forget_size();
                    redraw = true;
                }
                Msg::Input(_) => {}
                Msg::Signal(sig) if sig == signal_hook::consts::SIGCONT => repaint = true,
                Msg::Signal(sig) => return Ok(Ended::Signal(sig)),
            }
        }
        redraw |= app.poll_remote_step(Instant::now());
        redraw |= app.expire_status(Instant::now());
        app.sync_want();
        if repaint {
            term::repaint(terminal).context("repainting")?;
            redraw = true;
        }
        if redraw {
            terminal
                .draw(|f| render::draw(f, app, theme))
                .context("drawing")?;
            if app.time.derived.is_some() {
                if let Some(drawn) = app.first_frame.take() {
                    let _ = drawn.send(());
                }
            }
        }
    }
}
