//! The fleet screen of `perftop ssh H1 H2 ...`: one live `App` per host, each fed by its own
//! link (so a slow or dead host only ever stalls its own row), a table of one row per host
//! sorted by severity, and a host's full dashboard on Enter (Esc, with nothing open over that
//! dashboard, comes back).
//!
//! The table is redrawn at most once a second for new samples (at once for a key), however
//! many hosts send them, and not at all when no row changed: with 16 hosts at 1 s, a draw per
//! sample would be 16 draws a second for a screen a person reads, each host's numbers being
//! per second anyway. A hidden host's sample is judged (its row shows its worst finding) but
//! its panes are drawn only when it is opened.

use super::app::{App, Effect};
use super::events::{Ended, Msg};
use super::keymap::Screen;
use super::theme::Theme;
use super::{events, render, term, wire};
use crate::findings::Severity;
use anyhow::{Context, Result};
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::{Frame, Terminal};
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

/// The least time between two draws of the table for new samples.
const TABLE_EVERY: Duration = Duration::from_secs(1);

/// One host's row, from its newest sample and its raised findings.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub host: usize,
    pub label: String,
    pub busy: String,
    pub avail: String,
    pub psi: String,
    pub await_ms: String,
    pub dirty: String,
    pub link: String,
    pub finding: String,
    /// 4 crit, 3 link lost, 2 warn, 1 info, 0 nothing to say.
    pub rank: u8,
}

fn num0(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.0}"))
}

/// The row of host `i`.
pub fn row(i: usize, label: &str, app: &App) -> Row {
    let lost = app.session.link.clone();
    let mut r = Row {
        host: i,
        label: label.to_string(),
        busy: "-".into(),
        avail: "-".into(),
        psi: "-".into(),
        await_ms: "-".into(),
        dirty: "-".into(),
        link: match &lost {
            None => "up".into(),
            Some(l) if l.starts_with("link lost") => "lost".into(),
            Some(l) => crate::units::fit(l, 10),
        },
        finding: lost.clone().unwrap_or_default(),
        rank: u8::from(lost.as_deref().is_some_and(|l| l.starts_with("link lost"))) * 3,
    };
    let Some(d) = app.time.derived.as_ref() else {
        return r;
    };
    r.busy = num0(d.host.busy_pct);
    r.avail = crate::units::kb(d.memory.mem_available_kb);
    let p = &d.pressure;
    let some =
        |m: &Option<crate::derive::pressure::PsiMetrics>| num0(m.as_ref().and_then(|m| m.some_pct));
    r.psi = format!("{}/{}/{}", some(&p.cpu), some(&p.memory), some(&p.io));
    r.await_ms = num0(
        d.disks
            .iter()
            .filter(|k| !k.partition)
            .flat_map(|k| [k.r_await, k.w_await])
            .flatten()
            .reduce(f64::max),
    );
    let dt = &d.dirty;
    r.dirty = format!(
        "{}/{}",
        crate::units::kb(dt.dirty_kb.map(|k| k + dt.writeback_kb.unwrap_or(0))),
        crate::units::kb(dt.threshold_kb)
    );
    // What the dashboard's findings row shows: the raised findings and this interval's.
    if let Some(f) = app
        .judge
        .active
        .iter()
        .map(|a| &a.finding)
        .chain(&d.findings)
        .max_by_key(|f| f.severity)
    {
        let rank = match f.severity {
            Severity::Crit => 4,
            Severity::Warn => 2,
            Severity::Info => 1,
        };
        if rank > r.rank {
            r.rank = rank;
            r.finding = format!("{} {}", f.severity.as_str().to_uppercase(), f.message);
        }
    }
    r
}

/// The rows, most severe first (then as the hosts were given).
pub fn rows(apps: &[App], labels: &[String]) -> Vec<Row> {
    let mut rows: Vec<Row> = apps
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(i, (a, l))| row(i, l, a))
        .collect();
    rows.sort_by_key(|r| (std::cmp::Reverse(r.rank), r.host));
    rows
}

/// Where the fleet screen stands: the host under the cursor, the host open, if any.
#[derive(Debug, Default)]
pub struct Fleet {
    pub selected: usize,
    pub open: Option<usize>,
}

impl Fleet {
    /// A key on the table. Some(effect) to stop (quit).
    fn key(&mut self, k: KeyEvent, rows: &[Row]) -> Option<Effect> {
        let at = rows
            .iter()
            .position(|r| r.host == self.selected)
            .unwrap_or(0);
        match k.code {
            KeyCode::Char('q') => return Some(Effect::Quit),
            KeyCode::Down | KeyCode::Char('j') => {
                if let Some(r) = rows.get(at + 1) {
                    self.selected = r.host;
                }
            }
            KeyCode::Up | KeyCode::Char('k') => {
                if let Some(r) = at.checked_sub(1).and_then(|a| rows.get(a)) {
                    self.selected = r.host;
                }
            }
            KeyCode::Enter => self.open = rows.get(at).map(|r| r.host),
            _ => {}
        }
        None
    }
}

fn cell(s: &str, w: usize) -> String {
    format!("{:<w$} ", crate::units::fit(s, w))
}

fn rcell(s: &str, w: usize) -> String {
    format!("{:>w$} ", crate::units::fit(s, w))
}

/// The table: a title row, a header, one row per host.
pub fn draw(f: &mut Frame, rows: &[Row], fleet: &Fleet, t: &Theme) {
    let width = usize::from(f.area().width);
    let mut lines = vec![
        Line::from(Span::styled(
            format!(
                "{:<width$}",
                format!(
                    "perftop fleet  {} hosts  {} with findings  {} links lost",
                    rows.len(),
                    rows.iter().filter(|r| matches!(r.rank, 1 | 2 | 4)).count(),
                    rows.iter().filter(|r| r.link == "lost").count()
                )
            ),
            t.headline,
        )),
        Line::from(Span::styled(
            format!(
                "{}{}{}{}{}{}{}finding",
                cell("host", 20),
                rcell("cpu%", 4),
                rcell("avail", 6),
                rcell("psi c/m/io", 10),
                rcell("await", 5),
                rcell("dirty/limit", 11),
                cell("link", 10),
            ),
            t.title,
        )),
    ];
    for r in rows {
        let style = match r.rank {
            4 | 3 => t.crit,
            2 => t.warn,
            1 => t.info,
            _ => t.text,
        };
        let style = if r.host == fleet.selected {
            style.add_modifier(Modifier::REVERSED)
        } else {
            style
        };
        let text = format!(
            "{}{}{}{}{}{}{}{}",
            cell(&r.label, 20),
            rcell(&r.busy, 4),
            rcell(&r.avail, 6),
            rcell(&r.psi, 10),
            rcell(&r.await_ms, 5),
            rcell(&r.dirty, 11),
            cell(&r.link, 10),
            r.finding
        );
        lines.push(Line::from(Span::styled(
            format!("{:<width$}", crate::units::fit(&text, width)),
            style,
        )));
    }
    let help_row = usize::from(f.area().height).saturating_sub(1);
    while lines.len() < help_row {
        lines.push(Line::default());
    }
    lines.push(Line::from(Span::styled(
        "q quit  ↑/↓ j/k move  Enter open the host's dashboard (Esc comes back)",
        t.dim,
    )));
    f.render_widget(Paragraph::new(lines), f.area());
}

/// Whether Esc on host `app` goes back to the table: nothing is open over its dashboard.
fn at_top(app: &App) -> bool {
    app.prompt.filter.is_none()
        && app.prompt.goto.is_none()
        && app.tweaks.dialog.is_none()
        && app.prefs.screen() == Screen::Dashboard
}

/// Runs the fleet screen until `q` or a signal.
pub(super) fn run(
    apps: &mut [App],
    labels: &[String],
    theme: &Theme,
    rx: &Receiver<Msg>,
    ctls: &[Sender<Duration>],
) -> Result<Ended> {
    let guard = term::TerminalGuard::enter()?;
    let backend = wire::Wire::new(term::FrameWriter::new(std::io::stdout()), theme.depth);
    let mut terminal = Terminal::new(backend).context("starting the terminal backend")?;
    term::repaint(&mut terminal).context("clearing the screen")?;
    let result = event_loop(&mut terminal, apps, labels, theme, (rx, ctls));
    drop(terminal);
    drop(guard);
    result
}

fn event_loop(
    terminal: &mut Terminal<wire::Wire<term::FrameWriter<std::io::Stdout>>>,
    apps: &mut [App],
    labels: &[String],
    theme: &Theme,
    (rx, ctls): (&Receiver<Msg>, &[Sender<Duration>]),
) -> Result<Ended> {
    let mut fleet = Fleet::default();
    let mut last_draw: Option<Instant> = None;
    // The table as last drawn (None after a key, a resize or the dashboard): unchanged rows
    // are not drawn again.
    let mut drawn: Option<(Vec<Row>, usize)> = None;
    let mut dirty = true;
    loop {
        let now = Instant::now();
        // The open dashboard is drawn at once, as live mode draws; the table at most every
        // TABLE_EVERY.
        let draw_at = match (dirty, fleet.open, last_draw) {
            (false, _, _) => None,
            (true, Some(_), _) | (true, None, None) => Some(now),
            (true, None, Some(at)) => Some(at + TABLE_EVERY),
        };
        if draw_at.is_some_and(|d| d <= now) {
            let rows = rows(apps, labels);
            let same = fleet.open.is_none()
                && drawn
                    .as_ref()
                    .is_some_and(|(r, sel)| *r == rows && *sel == fleet.selected);
            if !same {
                terminal
                    .draw(|f| match fleet.open {
                        Some(i) => render::draw(f, &apps[i], theme),
                        None => draw(f, &rows, &fleet, theme),
                    })
                    .context("drawing")?;
                last_draw = Some(Instant::now());
            }
            drawn = fleet.open.is_none().then_some((rows, fleet.selected));
            dirty = false;
        }
        let status = fleet.open.and_then(|i| apps[i].status.deadline());
        // A remote tweak step runs on its own thread; its answer is looked for here.
        let step = apps
            .iter()
            .filter_map(|a| a.tweaks.remote_deadline(now))
            .min();
        let wake = [draw_at.filter(|_| dirty), status, step]
            .into_iter()
            .flatten()
            .min();
        let Some(first) = events::next_message(rx, wake) else {
            return Ok(Ended::Quit);
        };
        for msg in first.into_iter().chain(rx.try_iter()) {
            match msg {
                Msg::HostSample(i, s) => {
                    if let Some(app) = apps.get_mut(i) {
                        app.push_streamed(s);
                        // perftop's own cost, in the header of the open dashboard only.
                        if fleet.open == Some(i) {
                            app.session.self_cost.update();
                        }
                        dirty |= fleet.open.is_none_or(|o| o == i);
                    }
                }
                Msg::HostLink(i, state) => {
                    if let Some(app) = apps.get_mut(i) {
                        app.session.link = state;
                        dirty |= fleet.open.is_none_or(|o| o == i);
                    }
                }
                Msg::Input(Event::Key(k)) if k.kind != KeyEventKind::Release => {
                    let effect = match fleet.open {
                        Some(i) if k.code == KeyCode::Esc && at_top(&apps[i]) => {
                            fleet.open = None;
                            Effect::Repaint
                        }
                        Some(i) => {
                            let e = apps[i].key(k);
                            apps[i].status.keyed(Instant::now());
                            e
                        }
                        None => {
                            let rows = rows(apps, labels);
                            let e = fleet.key(k, &rows).unwrap_or(Effect::Redraw);
                            if let Some(o) = fleet.open {
                                // Its header's perftop cost is kept only while it is open.
                                apps[o].session.self_cost.update();
                                Effect::Repaint
                            } else {
                                e
                            }
                        }
                    };
                    match effect {
                        Effect::Quit => return Ok(Ended::Quit),
                        Effect::Repaint => {
                            term::repaint(terminal).context("repainting")?;
                            (last_draw, drawn) = (None, None);
                            dirty = true;
                        }
                        Effect::Suspend => {
                            term::suspend()?;
                            term::repaint(terminal).context("repainting")?;
                            drawn = None;
                            dirty = true;
                        }
                        Effect::None => {}
                        Effect::IntervalChanged => {
                            // `+`/`-` on an open host: its remote sampler takes the new
                            // interval (the others keep theirs).
                            if let Some(i) = fleet.open {
                                if let (Some(ctl), Some(app)) = (ctls.get(i), apps.get(i)) {
                                    let _ = ctl.send(app.time.interval);
                                }
                            }
                            (last_draw, drawn) = (None, None);
                            dirty = true;
                        }
                        Effect::Redraw => {
                            (last_draw, drawn) = (None, None);
                            dirty = true;
                        }
                    }
                }
                Msg::Input(Event::Resize(_, _)) => {
                    terminal.backend().forget_size();
                    (last_draw, drawn) = (None, None);
                    dirty = true;
                }
                Msg::Signal(sig) if sig == signal_hook::consts::SIGCONT => {
                    term::repaint(terminal).context("repainting")?;
                    drawn = None;
                    dirty = true;
                }
                Msg::Signal(sig) => return Ok(Ended::Signal(sig)),
                _ => {}
            }
        }
        for (i, app) in apps.iter_mut().enumerate() {
            // A step's answer lands in its host's dashboard, open or not.
            let changed = app.poll_remote_step(Instant::now());
            dirty |= changed && fleet.open == Some(i);
        }
        if let Some(i) = fleet.open {
            dirty |= apps[i].expire_status(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyModifiers;

    fn app(link: Option<&str>) -> App {
        let mut a = App::new(Duration::from_secs(1), Duration::from_secs(60));
        a.session.link = link.map(str::to_string);
        a
    }

    /// A lost link sorts before hosts with nothing to say; the cursor follows the sorted rows
    /// and Enter opens the host under it.
    #[test]
    fn lost_links_sort_first_and_enter_opens_the_selected_host() {
        let apps = [
            app(None),
            app(Some("link lost at 14:02:11, reconnecting (in 1 s): closed")),
            app(Some("connecting")),
        ];
        let labels: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let rows = rows(&apps, &labels);
        let order: Vec<(&str, &str, u8)> = rows
            .iter()
            .map(|r| (r.label.as_str(), r.link.as_str(), r.rank))
            .collect();
        assert_eq!(
            order,
            [("b", "lost", 3), ("a", "up", 0), ("c", "connecting", 0)]
        );
        let mut f = Fleet::default();
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        // Host 0 ("a") is second in the table: one down is "c", Enter opens it.
        assert_eq!(f.key(key(KeyCode::Down), &rows), None);
        assert_eq!(f.selected, 2);
        assert_eq!(f.key(key(KeyCode::Enter), &rows), None);
        assert_eq!(f.open, Some(2));
        assert_eq!(f.key(key(KeyCode::Char('q')), &rows), Some(Effect::Quit));
    }
}
