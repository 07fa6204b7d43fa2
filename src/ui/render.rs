//! Drawing only: lays out the header, the six panes, the findings strip and the footer for the
//! terminal's size tier, and the help and "too small" screens. Reads `App`, never changes it.

use super::app::App;
use super::keymap::footer_hints;
use super::layout;
use super::panes::{self, View};
use super::spans::span;
use super::theme::{GlyphSet, Theme};
use crate::findings::Severity;
use crate::pane::Pane;
use crate::units::{duration, fit};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;

pub const MIN_W: u16 = 40;
pub const MIN_H: u16 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    TooSmall,
    Compact,
    Standard,
    Full,
}

pub fn tier(w: u16, h: u16) -> Tier {
    if w < MIN_W || h < MIN_H {
        Tier::TooSmall
    } else if w < 80 || h < 24 {
        Tier::Compact
    } else if w < 120 || h < 35 {
        Tier::Standard
    } else {
        Tier::Full
    }
}

/// Draws the frame; in ASCII mode the buffer is then folded to ASCII (`ascii::fold`), the
/// guarantee that no byte above 0x7f reaches the terminal whatever the text held.
pub fn draw(f: &mut Frame, app: &App, theme: &Theme) {
    draw_screen(f, app, theme);
    if theme.glyphs == GlyphSet::Ascii {
        super::ascii::fold(f.buffer_mut());
    }
}

fn draw_screen(f: &mut Frame, app: &App, theme: &Theme) {
    let area = f.area();
    let t = tier(area.width, area.height);
    if t == Tier::TooSmall {
        let msg = vec![
            Line::from(span("too small", theme.warn)),
            Line::from(span(
                format!("{}x{} < {MIN_W}x{MIN_H}", area.width, area.height),
                theme.text,
            )),
            Line::from(span("q quits", theme.dim)),
        ];
        super::paint::lines(f.buffer_mut(), area, &msg);
        return;
    }
    let Some(d) = app.time.derived.as_ref() else {
        // Nothing to show yet: say why when there is a reason (a replay whose samples do not
        // decode), rather than waiting on a first sample that will never come.
        let msg = match app.status.text.as_deref() {
            Some(why) => vec![
                Line::from(span(format!("perftop: {why}"), theme.crit)),
                Line::from(span("t / T step to another sample, q quits", theme.dim)),
            ],
            None => vec![Line::from(span(
                "perftop: reading the first sample...",
                theme.text,
            ))],
        };
        super::paint::lines(f.buffer_mut(), area, &msg);
        return;
    };
    let width = area.width as usize;
    let mut rows: Vec<Line<'static>> = Vec::with_capacity(area.height as usize);
    header(&mut rows, app, d, theme, width, t);
    let strip_rows = match t {
        Tier::Full => 3,
        _ => 1,
    };
    let findings = findings_strip(app, d, theme, width, strip_rows);
    let footer = footer(app, theme, width);
    let bottom_rows = findings.len() + footer.len();
    let avail = (area.height as usize).saturating_sub(rows.len() + bottom_rows);
    let opts = app.pane_opts();
    let view = |width: usize, detail: bool, budget: Option<usize>| View {
        d,
        opts,
        theme,
        width,
        detail,
        budget,
    };
    if app.prefs.zoom {
        let v = view(width, true, None);
        rows.extend(super::zoom::lines(
            app.prefs.focus,
            &v,
            &app.prefs.zoom_scroll,
            avail,
        ));
        pad(
            &mut rows,
            (area.height as usize).saturating_sub(bottom_rows),
        );
        rows.extend(findings);
        rows.extend(footer);
        super::paint::lines(f.buffer_mut(), area, &rows);
    } else {
        let top = rows.len() as u16;
        super::paint::lines(
            f.buffer_mut(),
            Rect::new(area.x, area.y, area.width, top),
            &rows,
        );
        let mut columns = layout::columns(width);
        let widths = layout::column_widths(width, columns.len());
        // The left column's models, built once for the balance and the drawing: a pane's
        // model holds a row per CPU, 4096 of them on a big host.
        let mut left_models = None;
        if let (Some(left), Some(w)) = (columns.first(), widths.first()) {
            // What the left column's panes hold, idle rows shown: the same from frame to frame
            // on a host (CPUs, nodes, pools), so the panes do not hop between columns.
            let v = view(*w, false, None);
            let models: Vec<_> = left.iter().map(|p| panes::model(*p, &v)).collect();
            let need: usize = left
                .iter()
                .zip(&models)
                .map(|(p, m)| 1 + panes::body_lens(*p, m, &v).full)
                .sum();
            left_models = Some((left.clone(), models));
            layout::balance(&mut columns, avail.saturating_sub(need));
        }
        let mut x = area.x;
        for (panes_here, w) in columns.iter().zip(widths) {
            let built = match left_models.take() {
                Some((panes, models)) if panes == *panes_here => Some(models),
                _ => None,
            };
            let lines = column(panes_here, w, avail, &view, built);
            let r = Rect::new(x, area.y + top, w as u16, avail as u16);
            super::paint::lines(f.buffer_mut(), r, &lines);
            x += w as u16 + 1;
        }
        let mut bottom = findings;
        bottom.extend(footer);
        let y = area.y + area.height.saturating_sub(bottom_rows as u16);
        super::paint::lines(
            f.buffer_mut(),
            Rect::new(area.x, y, area.width, bottom_rows as u16),
            &bottom,
        );
    }
    if app.prefs.findings_open {
        let list = super::findings_list::Of {
            judge: &app.judge,
            at_sample: app.time.view.is_some(),
            replay: app.is_replay(),
        };
        super::findings_list::draw(f, area, &list, &app.prefs.findings_scroll, d, theme);
    }
    if app.prefs.episodes_open {
        super::episodes::draw(f, area, &app.episodes, app.is_replay(), theme);
    }
    if app.prefs.help {
        super::help::draw(f, area, theme, app.is_replay(), &app.prefs.help_scroll);
    }
    if let Some(dlg) = &app.tweaks.dialog {
        let held = app.tweaks.hold.as_ref().map(|h| h.us);
        let v = dlg.view(super::dialog_box::inner_width(area.width), held);
        super::dialog_box::draw(f, area, v, &app.tweaks.scroll, theme);
    }
}

/// One column of panes `w` wide in `avail` rows (`built`: their models, when already built for
/// this view): titles, then the bodies cut to the rows the
/// layout gives them (re-laid out for that many rows where they hold more). A pane that draws
/// fewer lines than it is given (a table's header that would stand alone is left out) is held
/// to what it drew and the rows it leaves go to the others: no row stays blank while a pane
/// hides rows.
fn column<'a>(
    panes_here: &[Pane],
    w: usize,
    avail: usize,
    view: &dyn Fn(usize, bool, Option<usize>) -> View<'a>,
    built: Option<Vec<crate::view::model::PaneView>>,
) -> Vec<Line<'static>> {
    let v = view(w, false, None);
    let models: Vec<_> =
        built.unwrap_or_else(|| panes_here.iter().map(|p| panes::model(*p, &v)).collect());
    let sizes: Vec<panes::Lens> = panes_here
        .iter()
        .zip(&models)
        .map(|(p, m)| panes::body_lens(*p, m, &v))
        .collect();
    let firsts: Vec<usize> = panes_here
        .iter()
        .zip(&models)
        .map(|(p, m)| panes::first_rows(*p, m, &v))
        .collect();
    let rows = avail.saturating_sub(panes_here.len());
    let mut held: Vec<Option<usize>> = vec![None; panes_here.len()];
    let mut bodies = Vec::new();
    // Each round holds at least one more pane to what it drew: at most one round per pane.
    for _ in 0..=panes_here.len() {
        let cap = |i: usize, n: usize| held[i].map_or(n, |h| n.min(h));
        let lens: Vec<usize> = (0..sizes.len()).map(|i| cap(i, sizes[i].hidden)).collect();
        let fulls: Vec<usize> = (0..sizes.len()).map(|i| cap(i, sizes[i].full)).collect();
        let firsts: Vec<usize> = (0..sizes.len()).map(|i| cap(i, firsts[i])).collect();
        let alloc = layout::allocate_idle(panes_here, &lens, &fulls, &firsts, rows, v.opts.focus);
        bodies = panes_here
            .iter()
            .zip(&models)
            .zip(&alloc)
            .map(|((p, m), n)| cut(panes::body(*p, m, &view(w, false, Some(*n))), *n).0)
            .collect::<Vec<_>>();
        let mut short = false;
        for (i, b) in bodies.iter().enumerate() {
            if b.len() < alloc[i] && held[i] != Some(b.len()) {
                held[i] = Some(b.len());
                short = true;
            }
        }
        if !short {
            break;
        }
    }
    let mut lines = Vec::with_capacity(avail);
    for (((p, m), size), body) in panes_here.iter().zip(&models).zip(&sizes).zip(bodies) {
        // Lines of what it holds (idle rows hidden) that it does not show.
        let hidden = size.hidden.saturating_sub(body.len());
        let tag = (hidden > 0).then(|| format!("+{hidden}"));
        lines.push(panes::title(*p, m, &v, v.opts.focus == *p, tag));
        lines.extend(body);
    }
    lines.truncate(avail);
    lines
}

/// Blank lines up to `n`.
fn pad(rows: &mut Vec<Line<'static>>, n: usize) {
    rows.truncate(n);
    while rows.len() < n {
        rows.push(Line::default());
    }
}

/// The first `n` lines and how many were left out (shown on the pane's title line).
fn cut(mut lines: Vec<Line<'static>>, n: usize) -> (Vec<Line<'static>>, usize) {
    let hidden = lines.len().saturating_sub(n);
    lines.truncate(n);
    (lines, hidden)
}

fn header(
    rows: &mut Vec<Line<'static>>,
    app: &App,
    d: &crate::derive::Derived,
    t: &Theme,
    width: usize,
    tier: Tier,
) {
    let h = &d.host;
    let mode = app.time.mode_label();
    let mode_style = if mode == "LIVE" { t.good } else { t.warn };
    let load = h.loadavg.map_or("-".into(), |l| {
        if tier == Tier::Full {
            format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2])
        } else {
            format!("{:.2}", l[0])
        }
    });
    let cpus = match h.cpus_present {
        Some(p) => format!("{}/{}", h.cpus_online, p),
        None => h.cpus_online.to_string(),
    };
    // Most telling first: the kernel string is long and goes last, where it may be cut.
    let left = format!(
        "{}  up {}  {} cpus  {} node{}  load {}  {}",
        h.hostname.as_deref().unwrap_or("-"),
        duration(h.uptime_s),
        cpus,
        h.nodes,
        if h.nodes == 1 { "" } else { "s" },
        load,
        h.kernel.as_deref().unwrap_or("-"),
    );
    let right = format!(" {} {:.2}s ", mode, app.time.interval.as_secs_f64());
    let rec = app
        .session
        .recording
        .active()
        .map(|r| format!(" REC {}", crate::units::kb(Some(r.rec.bytes / 1024))));
    // A latency hold changes how every CPU idles: said for as long as it lasts.
    let hold = app
        .tweaks
        .hold
        .as_ref()
        .map(|h| format!(" HOLD cpu_dma_latency {}us", h.us));
    let rec_len = rec.as_ref().map_or(0, |r| r.chars().count())
        + hold.as_ref().map_or(0, |h| h.chars().count());
    let room = width.saturating_sub(right.chars().count() + rec_len);
    let mut first = vec![span(format!("{:<room$}", fit(&left, room)), t.headline)];
    if let Some(h) = hold {
        first.push(span(h, t.warn));
    }
    if let Some(r) = rec {
        first.push(span(r, t.crit));
    }
    first.push(span(right, mode_style));
    rows.push(Line::from(first));
    let travelling = app.is_replay() || app.time.view.is_some();
    if tier == Tier::Compact {
        if travelling {
            rows.extend(super::timeline_row::rows(
                &app.time,
                &app.episode_spans(),
                t,
                width,
                false,
            ));
        }
        return;
    }
    rows.push(super::header_row::line(app, d, t, width));
    if travelling {
        rows.extend(super::timeline_row::rows(
            &app.time,
            &app.episode_spans(),
            t,
            width,
            true,
        ));
    }
}

/// Live: the tracker's raised findings. Stepping through history: the rules that hold for the
/// sample on screen (single interval, no 3-sample rule), said as such.
fn findings_strip(
    app: &App,
    d: &crate::assess::Assessed,
    t: &Theme,
    width: usize,
    max: usize,
) -> Vec<Line<'static>> {
    let history = app.time.view.is_some();
    let active: Vec<crate::findings::ActiveFinding> = if history {
        d.findings
            .iter()
            .map(|f| crate::findings::ActiveFinding {
                finding: f.clone(),
                since_ms: d.host.wall_ms,
                samples: 1,
                clearing: None,
            })
            .collect()
    } else {
        app.judge.active.clone()
    };
    // When some do not fit, the strip says which key lists them all.
    let hint = if active.len() > max { " (f)" } else { "" };
    let lines = crate::findings::strip_rows(&active, width.saturating_sub(10 + hint.len()), max);
    let label = if history { "at sample" } else { "findings" };
    if lines.is_empty() {
        return vec![Line::from(vec![
            span(format!("{label} "), t.title),
            span("none", t.dim),
        ])];
    }
    let mut lines: Vec<Line<'static>> = lines
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let style = match row.severity {
                _ if row.clearing => t.dim,
                Some(Severity::Crit) => t.crit,
                Some(Severity::Warn) => t.warn,
                _ => t.info,
            };
            let head = if i == 0 {
                format!("{label:<10}")
            } else {
                " ".repeat(10)
            };
            Line::from(vec![span(head, t.title), span(row.text, style)])
        })
        .collect();
    if let Some(last) = lines.last_mut() {
        last.spans.push(span(hint, t.dim));
    }
    lines
}

/// A hint that follows the state: `space resume` while paused (live), `space pause` while a
/// replay plays, `Enter unzoom` while zoomed.
fn state_hint(app: &App, key: &str, hint: &'static str) -> &'static str {
    match key {
        "space" if app.is_replay() => {
            if app.time.playing.is_some() {
                "pause"
            } else {
                "play"
            }
        }
        "space" if app.time.paused => "resume",
        "Enter" if app.prefs.zoom => "unzoom",
        _ => hint,
    }
}

/// The key hints and the status message: one row, or two when the message does not fit one
/// (the hints then make room until the message goes, see `status`).
fn footer(app: &App, t: &Theme, width: usize) -> Vec<Line<'static>> {
    if let Some(text) = &app.prompt.goto {
        return vec![Line::from(vec![
            span("go to: ", t.title),
            span(format!("{text}_"), t.selection),
            span(
                "  14:05[:30] UTC, 10m ago, +5m, @unix; Enter goes, Esc cancels",
                t.dim,
            ),
        ])];
    }
    if let Some(filter) = &app.prompt.filter {
        return vec![Line::from(vec![
            span("filter: ", t.title),
            span(format!("{filter}_"), t.selection),
            span("  Enter keeps, Esc clears", t.dim),
        ])];
    }
    let mut spans = Vec::new();
    let mut used = 0;
    let status = app
        .status
        .text
        .as_deref()
        .map(|s| t.glyphs.text(s).into_owned());
    if let Some(s) = status.as_ref().filter(|s| s.chars().count() > width) {
        return super::status::wrap(s, width, super::status::MAX_ROWS)
            .into_iter()
            .map(|row| Line::from(span(row, t.info)))
            .collect();
    }
    let reserve = status.as_ref().map_or(0, |s| s.chars().count() + 2);
    for (key, hint) in footer_hints(app.is_replay()) {
        let hint = state_hint(app, &key, hint);
        let piece = format!("{key} {hint}  ");
        if used + piece.len() + reserve > width {
            break;
        }
        used += piece.len();
        spans.push(span(key, t.selection));
        spans.push(span(format!(" {hint}  "), t.dim));
    }
    if let Some(s) = status {
        spans.push(span(s, t.info));
    }
    vec![Line::from(spans)]
}
