//! Where the panes go: one column below ~160 columns, two above; how many body rows each pane
//! gets (a header and one row each first, in priority order, then in proportion to what is left
//! of each, then idle rows in the rows no pane wants); no row stays blank while a pane has rows
//! hidden.

use crate::pane::{Pane, PANES};

/// From this width the panes stand in two columns.
pub const TWO_COLUMNS: usize = 160;

/// The panes of each column, top to bottom. Two columns put CPU (the pane that grows with the
/// host) with the memory panes, and I/O with networking.
pub fn columns(width: usize) -> Vec<Vec<Pane>> {
    if width >= TWO_COLUMNS {
        vec![
            vec![Pane::Cpu, Pane::Pressure, Pane::Numa, Pane::Huge],
            vec![Pane::Dirty, Pane::Disks, Pane::Softirq, Pane::Procs],
        ]
    } else {
        vec![PANES.to_vec()]
    }
}

/// Rows the left column must have left, its panes whole, for Processes to stand under them: its
/// title, the table header and three processes.
pub const PROCS_LEFT_FROM: usize = 5;

/// Two columns: Processes (the right column's last pane, and the one that holds the most rows
/// on a busy host) stands at the foot of the left column when that column's panes, whole with
/// their idle rows, leave it `PROCS_LEFT_FROM` rows or more (`left_spare`): rows the left
/// column would leave blank while the right one hides rows. The left panes' size is the host's
/// (CPUs, nodes), so the choice holds from one frame to the next.
pub fn balance(columns: &mut [Vec<Pane>], left_spare: usize) {
    if columns.len() != 2 || left_spare < PROCS_LEFT_FROM {
        return;
    }
    if let Some(i) = columns[1].iter().position(|p| *p == Pane::Procs) {
        let p = columns[1].remove(i);
        columns[0].push(p);
    }
}

/// Widths of the columns, one space between them.
pub fn column_widths(width: usize, n: usize) -> Vec<usize> {
    match n {
        0 | 1 => vec![width],
        _ => {
            let left = (width.saturating_sub(1)) / 2;
            vec![left, width.saturating_sub(left + 1)]
        }
    }
}

/// Lines up to which a pane (or a table in one) is completed before the big ones grow.
pub const SMALL: usize = 6;

/// Which pane gets rows first: the focused one, then CPU, Disks, Softirq, Dirty, Pressure, NUMA,
/// huge pages.
fn priority(p: Pane) -> usize {
    match p {
        Pane::Cpu => 1,
        Pane::Disks => 2,
        Pane::Softirq => 3,
        Pane::Dirty => 4,
        Pane::Pressure => 5,
        Pane::Numa => 6,
        Pane::Huge => 7,
        Pane::Procs => 8,
    }
}

/// Rows for each pane body (`lens[i]` lines wanted by `panes[i]`) out of `rows`.
///
/// First each pane, focus first then by priority, gets `firsts[i]` rows (a table header and one
/// row; CPU also its heat strip) or what is left; then each further row completes a pane that
/// lacks only that row, else grows a small pane (at most `SMALL` lines, in order), else goes to
/// the pane that shows the smallest share of what it holds, the focused pane's share counted at
/// a quarter, CPU's at half (ties by priority): rows follow what panes hold, and Tab moves them. Given one row at a time, the split is
/// monotone: one row less takes one row from one pane and moves nothing else. Every row is
/// given while any pane wants one.
pub fn allocate(
    panes: &[Pane],
    lens: &[usize],
    firsts: &[usize],
    rows: usize,
    focus: Pane,
) -> Vec<usize> {
    let (order, weights) = order_and_weights(panes, focus);
    share(&order, lens, firsts, &weights, rows)
}

/// `allocate`, then the rows left once every pane is whole go to the idle rows the `h` switch
/// hides (`fulls[i]` lines with them shown), shared the same way: a blank row is worth less
/// than an idle disk.
pub fn allocate_idle(
    panes: &[Pane],
    lens: &[usize],
    fulls: &[usize],
    firsts: &[usize],
    rows: usize,
    focus: Pane,
) -> Vec<usize> {
    let (order, weights) = order_and_weights(panes, focus);
    share_then_reveal(&order, lens, fulls, firsts, &weights, rows)
}

fn order_and_weights(panes: &[Pane], focus: Pane) -> (Vec<usize>, Vec<usize>) {
    let mut order: Vec<usize> = (0..panes.len()).collect();
    order.sort_by_key(|&i| (panes[i] != focus, priority(panes[i])));
    let weights: Vec<usize> = panes
        .iter()
        .map(|&p| match p {
            p if p == focus => 4,
            Pane::Cpu => 2,
            _ => 1,
        })
        .collect();
    (order, weights)
}

/// `share` of `lens`; when rows are left with every part whole, those are shared among the
/// parts' idle lines (`fulls[i] - lens[i]`), every one of which shows a row.
pub fn share_then_reveal(
    order: &[usize],
    lens: &[usize],
    fulls: &[usize],
    firsts: &[usize],
    weights: &[usize],
    rows: usize,
) -> Vec<usize> {
    let mut alloc = share(order, lens, firsts, weights, rows);
    let spare = rows.saturating_sub(alloc.iter().sum());
    if spare > 0 {
        let idle: Vec<usize> = lens
            .iter()
            .zip(fulls)
            .map(|(l, f)| f.saturating_sub(*l))
            .collect();
        let more = share(order, &idle, &vec![1; idle.len()], weights, spare);
        for (a, m) in alloc.iter_mut().zip(more) {
            *a += m;
        }
    }
    alloc
}

/// Shares `rows` among parts that hold `lens[i]` lines: first, in `order`, each gets `firsts[i]`
/// (or what is left); then each further row completes a part that lacks only that row, else
/// grows a small part (at most `SMALL` lines), else goes to the part showing the smallest share
/// of what it holds, weighted by `weights[i]` (ties by order). Every row is given while any part wants one.
pub fn share(
    order: &[usize],
    lens: &[usize],
    firsts: &[usize],
    weights: &[usize],
    mut rows: usize,
) -> Vec<usize> {
    let mut alloc = vec![0usize; lens.len()];
    let first = |i: usize| firsts.get(i).copied().unwrap_or(2);
    for &i in order {
        // All or nothing: part of a first (a table header without its row) says nothing that
        // the title's headline does not.
        let want = lens[i].min(first(i));
        let give = if want <= rows { want } else { 0 };
        alloc[i] = give;
        rows -= give;
    }
    while rows > 0 {
        // A part that got none of its first grows only when no other part can.
        let starved = |i: usize| alloc[i] == 0 && first(i) >= 2;
        let fed = order.iter().any(|&i| alloc[i] < lens[i] && !starved(i));
        let open = order
            .iter()
            .copied()
            .filter(|&i| alloc[i] < lens[i] && (!fed || !starved(i)));
        // A part one row short is shown whole (and loses its "+1") before others grow, then
        // small tables (four disks, two nodes): a hidden disk can be the stuck one, and it costs
        // a big table its 20th row.
        let next = open
            .clone()
            .find(|&i| lens[i] - alloc[i] == 1)
            .or_else(|| open.clone().find(|&i| lens[i] <= SMALL))
            .or_else(|| {
                let weight = |i: usize| weights.get(i).copied().unwrap_or(1).max(1);
                // alloc / (len * weight) smallest, compared without division.
                open.min_by(|&a, &b| {
                    (alloc[a] * lens[b] * weight(b)).cmp(&(alloc[b] * lens[a] * weight(a)))
                })
            });
        let Some(i) = next else { break };
        alloc[i] += 1;
        rows -= 1;
    }
    alloc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_given_while_a_pane_wants_one() {
        // 80x24 under tmux: 23 rows less header (2), strip, footer and the titles.
        let lens = [5, 3, 4, 4, 3, 20, 6, 8];
        for rows in 0..40 {
            let a = allocate(&PANES, &lens, &[2; 8], rows, Pane::Cpu);
            let given: usize = a.iter().sum();
            assert_eq!(given, rows.min(lens.iter().sum()), "rows {rows}: {a:?}");
            assert!(a.iter().zip(lens).all(|(a, l)| *a <= l), "{a:?}");
        }
        // One row fewer takes rows from one pane only: one row, or a whole first (header and
        // row) whose freed row then goes to another pane.
        for rows in 1..40 {
            let a = allocate(&PANES, &lens, &[2; 8], rows, Pane::Cpu);
            let b = allocate(&PANES, &lens, &[2; 8], rows - 1, Pane::Cpu);
            let lost: Vec<usize> = (0..8).filter(|&i| b[i] < a[i]).collect();
            assert_eq!(lost.len(), 1, "{a:?} vs {b:?}");
            assert!(a[lost[0]] - b[lost[0]] <= 2, "{a:?} vs {b:?}");
            assert!(
                b.iter().zip(&a).all(|(y, x)| y <= &(x + 1)),
                "{a:?} vs {b:?}"
            );
        }
        // No pane is left with a header alone while a pane already showing rows could take
        // the row (the rest are full, or have none: one row would be a header alone there too).
        for rows in 0..40 {
            let a = allocate(&PANES, &lens, &[2; 8], rows, Pane::Cpu);
            let others_full = |i: usize| (0..8).all(|j| j == i || a[j] >= lens[j] || a[j] == 0);
            for i in 0..8 {
                assert!(a[i] != 1 || others_full(i), "rows {rows}: {a:?}");
            }
        }
    }

    #[test]
    fn rows_follow_what_panes_hold() {
        // 14 spare rows after the first pass: softirq wants 18 more, the others 1 each.
        let lens = [3, 3, 3, 3, 3, 20, 3, 3];
        let a = allocate(&PANES, &lens, &[2; 8], 30, Pane::Cpu);
        assert!(a[5] > a[0] + 4, "the big pane gets most: {a:?}");
        assert_eq!(a.iter().sum::<usize>(), 30);
    }

    #[test]
    fn rows_left_over_show_idle_rows() {
        // CPU holds 5 lines (9 with its idle rows), Disks 3 (4 with its idle disk).
        let (panes, lens, fulls) = ([Pane::Cpu, Pane::Disks], [5, 3], [9, 4]);
        let a = |rows| allocate_idle(&panes, &lens, &fulls, &[2, 2], rows, Pane::Cpu);
        // Short of what the panes hold: idle rows stay hidden, as `allocate` shares them.
        assert_eq!(a(6), allocate(&panes, &lens, &[2, 2], 6, Pane::Cpu));
        assert_eq!(a(8), vec![5, 3]);
        // Beyond it every row shows an idle row, until all show.
        for rows in 9..=13 {
            let got = a(rows);
            assert_eq!(got.iter().sum::<usize>(), rows, "{got:?}");
            assert!(got[0] >= 5 && got[1] >= 3 && got[0] <= 9 && got[1] <= 4);
        }
        // One idle row each first, in priority order.
        assert_eq!(a(9), vec![6, 3]);
        assert_eq!(a(10), vec![6, 4]);
        assert_eq!(a(20), vec![9, 4]);
    }

    #[test]
    fn two_columns_from_160() {
        assert_eq!(columns(159).len(), 1);
        assert_eq!(columns(160).len(), 2);
        assert_eq!(column_widths(200, 2), vec![99, 100]);
        let all: Vec<Pane> = columns(200).concat();
        assert_eq!(all.len(), PANES.len());
        // Processes moves left only when the left column leaves it room.
        let mut c = columns(200);
        balance(&mut c, PROCS_LEFT_FROM - 1);
        assert_eq!(c, columns(200));
        balance(&mut c, PROCS_LEFT_FROM);
        assert_eq!(c[0].last(), Some(&Pane::Procs));
        assert_eq!(c.concat().len(), PANES.len());
        let mut one = columns(100);
        balance(&mut one, 40);
        assert_eq!(one, columns(100));
    }
}
