//! The live dashboard: a sampler thread, an input thread and a signal thread feed one channel;
//! the screen is redrawn only on new data, input or resize — never on a blind timer.

pub mod app;
pub mod keymap;
pub mod panes;
pub mod render;
pub mod ring;
pub mod selfcost;
pub mod term;
pub mod theme;

use crate::root::Root;
use crate::sample::Sample;
use crate::source::Reader;
use anyhow::{bail, Context, Result};
use app::{App, Effect};
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::Terminal;
use std::io::IsTerminal;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};
use theme::{ColorDepth, GlyphSet, Theme};

pub struct Options {
    pub root: Root,
    pub interval: Duration,
    pub keep: Duration,
    pub theme: String,
    pub color: Option<String>,
    pub glyphs: Option<String>,
    pub thresholds: crate::findings::Thresholds,
    /// `--read-only`: every tweak disabled.
    pub read_only: bool,
    /// Tweak state directory (`--state-dir`; default /run/perftop).
    pub state_dir: Option<std::path::PathBuf>,
}

enum Msg {
    Sample(Box<Sample>),
    Input(Event),
    Signal(i32),
}

/// Theme from the options and the environment (NO_COLOR, COLORTERM, TERM, locale).
pub fn theme_from(opts: &Options) -> Result<Theme> {
    let env = |k: &str| std::env::var(k).ok();
    let depth = ColorDepth::detect(opts.color.as_deref(), &env)?;
    let glyphs = GlyphSet::detect(opts.glyphs.as_deref(), &env)?;
    Theme::load(&opts.theme, depth, glyphs)
}

pub fn run(opts: Options) -> Result<()> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        bail!("the dashboard needs a terminal; for pipes use `perftop batch`");
    }
    let theme = theme_from(&opts)?;
    let mut app = App::new(opts.interval, opts.keep);
    app.set_thresholds(opts.thresholds.clone());
    app.privilege = if rustix::process::geteuid().is_root() {
        "root".into()
    } else {
        "user: tweaks need root".into()
    };
    // Tweaks stay applied when perftop exits (journal in /run/perftop; `perftop tweak undo`).
    let mut tweak_ctx = crate::tweak::Ctx::new(opts.root.clone(), opts.state_dir.clone());
    tweak_ctx.read_only = opts.read_only;
    app.tweaks.ctx = Some(tweak_ctx);
    if !opts.root.is_live() {
        app.root_label = Some(opts.root.base().display().to_string());
    }

    let (tx, rx) = mpsc::channel::<Msg>();
    let (ctl_tx, ctl_rx) = mpsc::channel::<Duration>();
    spawn_sampler(
        Reader::new(opts.root.clone()),
        opts.interval,
        tx.clone(),
        ctl_rx,
    )?;
    spawn_input(tx.clone())?;
    spawn_signals(tx)?;

    let guard = term::TerminalGuard::enter()?;
    let backend = CrosstermBackend::new(term::FrameWriter::new(std::io::stdout()));
    let mut terminal = Terminal::new(backend).context("starting the terminal backend")?;
    repaint(&mut terminal).context("clearing the screen")?;
    let result = event_loop(&mut terminal, &mut app, &theme, &rx, &ctl_tx);
    drop(terminal);
    drop(guard);
    result
}

fn event_loop(
    terminal: &mut Terminal<CrosstermBackend<term::FrameWriter<std::io::Stdout>>>,
    app: &mut App,
    theme: &Theme,
    rx: &Receiver<Msg>,
    ctl: &Sender<Duration>,
) -> Result<()> {
    loop {
        let Ok(first) = rx.recv() else {
            return Ok(());
        };
        let mut redraw = false;
        let mut repaint = false;
        // Handle everything already queued before drawing once.
        for msg in std::iter::once(first).chain(rx.try_iter()) {
            match msg {
                Msg::Sample(s) => {
                    app.push_sample(*s);
                    app.self_cost.update();
                    redraw = true;
                }
                Msg::Input(Event::Key(k)) if k.kind != KeyEventKind::Release => match app.key(k) {
                    Effect::None => {}
                    Effect::Redraw => redraw = true,
                    Effect::Repaint => repaint = true,
                    Effect::Quit => return Ok(()),
                    Effect::IntervalChanged => {
                        let _ = ctl.send(app.interval);
                        redraw = true;
                    }
                    Effect::Suspend => {
                        term::suspend()?;
                        repaint = true;
                    }
                },
                Msg::Input(Event::Resize(_, _)) => redraw = true,
                Msg::Input(_) => {}
                Msg::Signal(sig) if sig == signal_hook::consts::SIGCONT => repaint = true,
                Msg::Signal(_) => return Ok(()),
            }
        }
        if repaint {
            self::repaint(terminal).context("repainting")?;
            redraw = true;
        }
        if redraw {
            terminal
                .draw(|f| render::draw(f, app, theme))
                .context("drawing")?;
        }
    }
}

/// Clears the screen and forgets the last frame so the next draw sends everything. (Terminal::
/// clear would ask the terminal for the cursor position, racing the input thread for the reply.)
fn repaint<B: ratatui::backend::Backend>(terminal: &mut Terminal<B>) -> Result<(), B::Error> {
    terminal
        .backend_mut()
        .clear_region(ratatui::backend::ClearType::All)?;
    // Each swap resets the buffer it leaves behind: two swaps reset both.
    terminal.swap_buffers();
    terminal.swap_buffers();
    Ok(())
}

/// Reads a sample every interval (deadline based, so reading time does not drift the clock).
fn spawn_sampler(
    mut reader: Reader,
    interval: Duration,
    tx: Sender<Msg>,
    ctl: Receiver<Duration>,
) -> Result<()> {
    std::thread::Builder::new()
        .name("sampler".into())
        .spawn(move || {
            let mut interval = interval;
            let mut next = Instant::now();
            loop {
                if tx.send(Msg::Sample(Box::new(reader.sample()))).is_err() {
                    return;
                }
                next += interval;
                let now = Instant::now();
                if next < now {
                    next = now; // fell behind (suspended, slow root): do not burst
                }
                loop {
                    match ctl.recv_timeout(next.saturating_duration_since(Instant::now())) {
                        Ok(d) => {
                            // New interval: next sample one new interval after the last one.
                            next = next - interval + d;
                            interval = d;
                        }
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
            }
        })
        .context("starting the sampler thread")?;
    Ok(())
}

fn spawn_input(tx: Sender<Msg>) -> Result<()> {
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

fn spawn_signals(tx: Sender<Msg>) -> Result<()> {
    use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT, SIGCONT])
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
