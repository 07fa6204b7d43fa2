//! The episodes list (`E`): the runs of findings that `perftop explain` would report, one line
//! each, over the recording a replay shows (read on a thread when the replay opens) or the
//! history the live dashboard keeps (built when the list opens). Up/Down pick one; Enter goes
//! to its start, as `b` would.

use super::scroll::{position, Move, Scroll};
use super::theme::Theme;
use crate::explain::brief::Brief;
use crate::findings::Severity;
use crate::record::format_clock;
use crate::units::fit;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::Frame;

/// Where the list's episodes stand.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum State {
    /// Not read yet (live: read when the list opens).
    #[default]
    Unread,
    /// A replay's recording is being read on a thread.
    Reading,
    Ready(Vec<Brief>),
    Failed(String),
}

#[derive(Debug, Default)]
pub struct Episodes {
    pub state: State,
    pub open: bool,
    /// The episode picked.
    pub sel: usize,
    pub scroll: Scroll,
}

impl Episodes {
    pub fn list(&self) -> &[Brief] {
        match &self.state {
            State::Ready(v) => v,
            _ => &[],
        }
    }

    /// Up/Down/PgUp/PgDn/Home/End move the pick.
    pub fn step(&mut self, m: Move) {
        let n = self.list().len();
        if n == 0 {
            return;
        }
        self.sel = match m {
            Move::Up => self.sel.saturating_sub(1),
            Move::Down => (self.sel + 1).min(n - 1),
            Move::PageUp => self.sel.saturating_sub(PAGE),
            Move::PageDown => (self.sel + PAGE).min(n - 1),
            Move::Top => 0,
            Move::Bottom => n - 1,
        };
    }

    /// The first sample of the picked episode (the end of its first interval), when there is
    /// one.
    pub fn picked_start(&self) -> Option<i64> {
        self.list().get(self.sel).map(|b| b.first_ms)
    }
}

/// The episodes of the recording at `path`, as `perftop explain` finds them (one thread: the
/// replay on screen keeps the other CPUs).
pub fn read(path: &std::path::Path, t: &crate::findings::Thresholds) -> Result<Vec<Brief>, String> {
    let rec = crate::record::Recording::open(path).map_err(|e| format!("{e:#}"))?;
    let report = crate::explain::explain(&rec, None, None, t, 1).map_err(|e| format!("{e:#}"))?;
    Ok(crate::explain::brief::of_report(&report))
}

/// Episodes a PgUp/PgDn moves.
const PAGE: usize = 10;

/// `14:06:50-14:07:30  40s  CRIT memory  OOM killer: 1 process killed ...`, cut to `width`
/// at a word.
fn line(b: &Brief, width: usize) -> String {
    let secs = (b.end_ms - b.start_ms).max(0) / 1000;
    let end = if b.open_end {
        "now".to_string()
    } else {
        format_clock(b.end_ms)
    };
    let sev = match b.severity {
        Severity::Crit => "CRIT",
        Severity::Warn => "WARN",
        Severity::Info => "INFO",
    };
    let head = format!(
        "{}-{end} {:>6} {sev} {:<8} ",
        format_clock(b.start_ms),
        crate::units::duration(Some(secs as f64)),
        b.family
    );
    let room = width.saturating_sub(head.chars().count());
    format!("{head}{}", words_fit(&crate::safe::line(&b.summary), room))
}

/// `text` cut at the last whole word that fits `width` (with `…`), never mid-word.
fn words_fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    for w in text.split(' ') {
        let next = if out.is_empty() {
            w.chars().count()
        } else {
            out.chars().count() + 1 + w.chars().count()
        };
        if next + 1 > width {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.is_empty() {
        return fit(text, width);
    }
    out.push('…');
    out
}

/// The list in a box over the dashboard, as the findings list is drawn.
pub fn draw(f: &mut Frame, area: Rect, e: &Episodes, replay: bool, t: &Theme) {
    let inner_w = area.width.saturating_sub(2) as usize;
    let (lines, what): (Vec<Line<'static>>, &str) = match &e.state {
        State::Ready(list) if list.is_empty() => (
            vec![Line::from(Span::styled(
                "  no episode: no finding held here".to_string(),
                t.dim,
            ))],
            "",
        ),
        State::Ready(list) => (
            list.iter()
                .enumerate()
                .map(|(i, b)| {
                    let style = if i == e.sel {
                        t.focus
                    } else {
                        match b.severity {
                            Severity::Crit => t.crit,
                            Severity::Warn => t.warn,
                            Severity::Info => t.text,
                        }
                    };
                    let mark = if i == e.sel { ">" } else { " " };
                    let text = t
                        .glyphs
                        .text(&line(b, inner_w.saturating_sub(2)))
                        .into_owned();
                    Line::from(Span::styled(format!("{mark} {text}"), style))
                })
                .collect(),
            " · Enter goes to its start",
        ),
        State::Reading | State::Unread => (
            vec![Line::from(Span::styled(
                "  reading the recording (every interval, as perftop explain does)...".to_string(),
                t.dim,
            ))],
            "",
        ),
        State::Failed(why) => (
            vec![Line::from(Span::styled(
                format!("  cannot read the episodes: {}", crate::safe::line(why)),
                t.warn,
            ))],
            "",
        ),
    };
    let total = lines.len();
    let room = area.height.saturating_sub(2);
    let h = room.min(total as u16 + 2);
    let r = Rect::new(area.x, area.y + 1, area.width, h);
    let page = h.saturating_sub(2) as usize;
    let off = e
        .scroll
        .follow(e.sel..e.sel + 1, total.saturating_sub(page), page);
    let shown: Vec<Line<'static>> = lines.into_iter().skip(off).take(page).collect();
    let span = if replay {
        "the recording"
    } else {
        "since start"
    };
    let title = if total > page {
        format!(
            " episodes, {span} · {}{what} · Esc closes ",
            position(off, shown.len(), total)
        )
    } else {
        format!(" episodes, {span}{what} · Esc closes ")
    };
    super::dialog_box::framed(f, r, shown, title, t);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief(start: i64, secs: i64, summary: &str) -> Brief {
        Brief {
            start_ms: start,
            first_ms: start + 1000,
            end_ms: start + secs * 1000,
            severity: Severity::Warn,
            family: "memory",
            summary: summary.into(),
            open_end: false,
        }
    }

    #[test]
    fn a_line_says_when_how_long_and_what_without_cutting_a_word() {
        // 1_700_000_000_000 ms is 22:13:20 UTC.
        let b = brief(
            1_700_000_000_000,
            40,
            "memory stalls 35% of the time (PSI memory some); with memory.swapping",
        );
        let l = line(&b, 60);
        assert_eq!(
            l,
            "22:13:20-22:14:00  0m40s WARN memory   memory stalls 35% of…"
        );
        assert!(l.chars().count() <= 60);
        let wide = line(&b, 200);
        assert!(wide.ends_with("with memory.swapping"), "{wide}");
    }

    #[test]
    fn the_pick_stays_in_the_list() {
        let mut e = Episodes {
            state: State::Ready(vec![brief(0, 1, "a"), brief(5000, 1, "b")]),
            ..Episodes::default()
        };
        e.step(Move::Up);
        assert_eq!(e.sel, 0);
        e.step(Move::PageDown);
        assert_eq!((e.sel, e.picked_start()), (1, Some(6000)));
        e.step(Move::Down);
        assert_eq!(e.sel, 1);
        e.step(Move::Top);
        assert_eq!(e.picked_start(), Some(1000));
    }
}
