//! The timeline bar's contents: which column holds the cursor, which the marks (gaps, tweak
//! actions, OOM kills) and which lie in an episode, over the history in view, and the times
//! labelled under it.

use super::history::Mark;
use crate::findings::Severity;

/// One column of the timeline bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    Played,
    Ahead,
    Cursor,
    Mark(Mark),
    /// Played or ahead, inside a warn or crit episode (its worst severity).
    Episode {
        played: bool,
        severity: Severity,
    },
}

/// The bar's cells for `width` columns over `first..=last`, with the cursor at `at`. A column
/// inside one of the `episodes` (start ms, end ms, worst severity) of warn or crit severity
/// shows the worst that covers it; a column holding a mark shows the mark instead (an OOM kill
/// wins over a kernel log event, that over a gap, a gap over an action); the cursor wins over
/// all so the position is never hidden.
pub fn bar(
    (first, last, at): (i64, i64, i64),
    marks: &[(i64, Mark)],
    episodes: &[(i64, i64, Severity)],
    width: usize,
) -> Vec<Cell> {
    if width == 0 {
        return Vec::new();
    }
    let span = (last - first).max(1) as f64;
    let col = |t: i64| -> usize {
        let f = (t - first) as f64 / span;
        ((f * (width - 1) as f64).round().max(0.0) as usize).min(width - 1)
    };
    let cur = col(at);
    let mut cells: Vec<Cell> = (0..width)
        .map(|c| if c < cur { Cell::Played } else { Cell::Ahead })
        .collect();
    for &(start, end, severity) in episodes {
        if severity < Severity::Warn || end < first || start > last {
            continue;
        }
        let (a, b) = (col(start.max(first)), col(end.min(last)));
        for cell in &mut cells[a..=b] {
            *cell = match *cell {
                Cell::Episode {
                    played,
                    severity: s,
                } => Cell::Episode {
                    played,
                    severity: s.max(severity),
                },
                other => Cell::Episode {
                    played: other == Cell::Played,
                    severity,
                },
            };
        }
    }
    let rank = |c: Cell| match c {
        Cell::Mark(Mark::Oom) => 4,
        Cell::Mark(Mark::Kernel) => 3,
        Cell::Mark(Mark::Gap) => 2,
        Cell::Mark(Mark::Action) => 1,
        _ => 0,
    };
    for &(t, m) in marks {
        let c = col(t);
        if rank(Cell::Mark(m)) > rank(cells[c]) {
            cells[c] = Cell::Mark(m);
        }
    }
    cells[cur] = Cell::Cursor;
    cells
}

/// Tick steps for the labels under the bar, shortest first: round clock times.
const STEPS_MS: [i64; 21] = [
    100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000,
    900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
];

/// Columns left free between two labels.
const GAP: usize = 2;

/// The times labelled under a bar of `width` columns over `first..=last`, as (column, label):
/// `first` starting at column 0, `last` ending at the last column, and between them the round
/// times (`14:10:00`: multiples of the shortest step in `STEPS_MS` that leaves room for them)
/// each starting at its own column, kept only where it clears its neighbours by `GAP` columns.
/// No label is cut and none overlaps; empty when the two ends do not fit.
pub fn ticks(
    first: i64,
    last: i64,
    width: usize,
    clock: &dyn Fn(i64) -> String,
) -> Vec<(usize, String)> {
    let (a, b) = (clock(first), clock(last));
    let len = a.chars().count().max(b.chars().count());
    if first >= last {
        return if a.chars().count() <= width {
            vec![(0, a)]
        } else {
            Vec::new()
        };
    }
    let end = width.saturating_sub(b.chars().count());
    if a.chars().count() + GAP > end {
        return Vec::new();
    }
    let span = (last - first) as f64;
    let col = |t: i64| ((t - first) as f64 / span * (width - 1) as f64).round() as usize;
    // Shortest step whose ticks stand a label and a gap apart (samples under a second apart
    // show tenths, so steps under a second only then).
    let cols_per_ms = (width - 1) as f64 / span;
    let min_step = if a.contains('.') { 0 } else { 1_000 };
    let step = STEPS_MS
        .iter()
        .copied()
        .filter(|s| *s >= min_step)
        .find(|s| *s as f64 * cols_per_ms >= (len + GAP) as f64);
    let mut out = vec![(0, a)];
    if let Some(step) = step {
        let mut t = (first.div_euclid(step) + 1) * step;
        while t < last {
            let c = col(t);
            let label = clock(t);
            let free = out
                .last()
                .is_some_and(|(pc, pl)| pc + pl.chars().count() + GAP <= c);
            if free && c + label.chars().count() + GAP <= end {
                out.push((c, label));
            }
            t += step;
        }
    }
    out.push((end, b));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_places_cursor_and_marks() {
        // 0..=100 over 11 columns: one column per 10 ms.
        let marks = [(30, Mark::Action), (30, Mark::Gap), (80, Mark::Action)];
        let b = bar((0, 100, 50), &marks, &[], 11);
        assert_eq!(b[0], Cell::Played);
        assert_eq!(b[3], Cell::Mark(Mark::Gap), "a gap wins over an action");
        assert_eq!(b[5], Cell::Cursor);
        assert_eq!(b[6], Cell::Ahead);
        assert_eq!(b[8], Cell::Mark(Mark::Action));
        // The cursor is never hidden by a mark, and a single-sample recording still draws.
        assert_eq!(bar((0, 100, 80), &marks, &[], 11)[8], Cell::Cursor);
        assert_eq!(
            bar((5, 5, 5), &[], &[], 3),
            vec![Cell::Cursor, Cell::Ahead, Cell::Ahead]
        );
        assert!(bar((0, 1, 0), &[], &[], 0).is_empty());
    }

    #[test]
    fn episodes_are_spans_under_the_marks_and_the_cursor() {
        use Severity::{Crit, Info, Warn};
        let ep = |played, severity| Cell::Episode { played, severity };
        // 0..=100 over 11 columns, cursor at 50: a warn episode 20..60, a crit one 55..75 (the
        // worst wins where they meet), an info one 90..100 (not drawn), an action at 30.
        let eps = [
            (20, 60, Warn),
            (55, 75, Crit),
            (90, 100, Info),
            (-50, -10, Crit),
        ];
        let b = bar((0, 100, 50), &[(30, Mark::Action)], &eps, 11);
        assert_eq!(b[1], Cell::Played);
        assert_eq!(b[2], ep(true, Warn));
        assert_eq!(b[3], Cell::Mark(Mark::Action), "a mark wins over the span");
        assert_eq!(b[4], ep(true, Warn));
        assert_eq!(b[5], Cell::Cursor);
        assert_eq!(
            b[6],
            ep(false, Crit),
            "crit wins where a warn one also holds"
        );
        assert_eq!(b[7], ep(false, Crit));
        assert_eq!(b[8], ep(false, Crit), "75 rounds to column 8");
        assert_eq!(b[9], Cell::Ahead, "an info episode is not drawn");
        assert_eq!(b[0], Cell::Played, "one wholly before the bar is not drawn");
        // One that began before the history in view and goes on after it covers it all.
        let b = bar((0, 100, 0), &[], &[(-500, 500, Warn)], 5);
        assert_eq!(b[0], Cell::Cursor);
        assert!(b[1..].iter().all(|c| *c == ep(false, Warn)), "{b:?}");
    }

    #[test]
    fn tick_labels_span_the_recording_and_never_overlap_or_cut() {
        use crate::record::{format_clock, format_clock_tenths};
        // 14:05:30 UTC.
        let t0 = 1_700_000_000_000 - 1_700_000_000_000 % 86_400_000 + 50_730_000;
        for (span, clock) in [
            (5_000, &format_clock as &dyn Fn(i64) -> String),
            (2_500, &format_clock_tenths),
            (3_600_000, &format_clock),
            (86_400_000 - 1_000, &format_clock),
            (37_123, &format_clock),
        ] {
            for width in 0..=190 {
                let t = ticks(t0, t0 + span, width, clock);
                if width < 2 * clock(t0).len() + GAP {
                    assert!(t.is_empty(), "{width}: the ends do not fit: {t:?}");
                    continue;
                }
                // First and last are the recording's span, at the bar's two ends.
                let (c0, l0) = t.first().expect("first");
                let (cn, ln) = t.last().expect("last");
                assert_eq!((*c0, l0.as_str()), (0, clock(t0).as_str()), "{width}");
                assert_eq!(*ln, clock(t0 + span), "{width}");
                assert_eq!(
                    cn + ln.len(),
                    width,
                    "{width}: the last ends at the bar's end"
                );
                for w in t.windows(2) {
                    let ((ca, la), (cb, _)) = (&w[0], &w[1]);
                    assert!(ca + la.len() + GAP <= *cb, "{width}: overlap {t:?}");
                }
                // Each tick between stands at its own time's column; they are round times
                // one step (or a multiple, where one was left out) apart.
                let times: Vec<i64> = t[1..t.len() - 1]
                    .iter()
                    .map(|(c, l)| {
                        let at = time_of(t0, l);
                        let want = ((at - t0) as f64 / span as f64 * (width - 1) as f64).round();
                        assert_eq!(*c, want as usize, "{width}: {l} at {c}");
                        at
                    })
                    .collect();
                let diffs: Vec<i64> = times.windows(2).map(|p| p[1] - p[0]).collect();
                if let Some(step) = diffs.iter().min() {
                    assert!(diffs.iter().all(|d| d % step == 0), "{width}: {t:?}");
                    assert!(times.iter().all(|x| x % step == 0), "{width}: {t:?}");
                }
            }
        }
        // 14:05:30..14:05:35 over 40 columns: a second is 7.8 columns, less than a label and
        // its gap (10), so 2 s steps; 14:05:34 (column 31) would run into the end's label.
        let t = ticks(t0, t0 + 5_000, 40, &format_clock);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["14:05:30", "14:05:32", "14:05:35"], "{t:?}");
        assert_eq!(t[1].0, 16, "2 s of 5 over 39 columns: 15.6, rounded");
        assert_eq!(t[2].0, 32);
        // Tenths: 14:05:30.0..14:05:32.5 over 80 columns, half-second steps (15.8 columns for a
        // 10-column label and its gap); 14:05:32.0 (column 63) would run into the end's label.
        let t = ticks(t0, t0 + 2_500, 80, &format_clock_tenths);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "14:05:30.0",
                "14:05:30.5",
                "14:05:31.0",
                "14:05:31.5",
                "14:05:32.5"
            ],
            "{t:?}"
        );
        // One sample: its time alone.
        assert_eq!(
            ticks(t0, t0, 20, &format_clock),
            vec![(0, "14:05:30".into())]
        );
    }

    /// The time `label` (`HH:MM:SS[.t]`) names at or after `first`, within a day of it.
    fn time_of(first: i64, label: &str) -> i64 {
        let f: Vec<f64> = label
            .split(':')
            .map(|x| x.parse().expect("number"))
            .collect();
        let ms = ((f[0] * 3600.0 + f[1] * 60.0 + f[2]) * 1000.0).round() as i64;
        let day = first - first.rem_euclid(86_400_000);
        if day + ms < first {
            day + ms + 86_400_000
        } else {
            day + ms
        }
    }
}
