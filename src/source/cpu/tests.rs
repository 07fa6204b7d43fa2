//! `/proc/stat`'s CPU lines as `read_cpu` takes them.

use super::*;
use crate::root::Root;

/// `parse_stat` of `text`: the probe (its problems), the totals and the per-CPU times.
fn parsed(text: &str) -> (Probe, CpuSample, Vec<(u32, CpuTimes)>) {
    let mut probe = Probe::new(Root::new("/nonexistent"));
    let mut out = CpuSample::default();
    let mut per = Vec::new();
    parse_stat(&mut probe, text, &mut out, &mut per);
    (probe, out, per)
}

#[test]
fn stat_ids_come_from_lines_not_positions() {
    let text = "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0 0 0\ncpu3 5 0 5 40 0 0 0 0 0 0\ncpuX 1 2\nintr 99 1 2 3\nctxt 1234\n";
    let (probe, out, per) = parsed(text);
    assert_eq!(per.iter().map(|p| p.0).collect::<Vec<_>>(), vec![0, 3]);
    assert_eq!(out.intr, Some(99));
    assert_eq!(out.ctxt, Some(1234));
    assert_eq!(out.total.map(|t| t.idle), Some(80));
    assert_eq!(probe.problems.len(), 1);
}

#[test]
fn short_cpu_lines() {
    let t = parse_times("1 2 3 4".split(' ')).expect("4 fields");
    assert_eq!((t.idle, t.iowait, t.steal), (4, 0, None));
    assert!(parse_times("1 2 3".split(' ')).is_none());
    assert!(parse_times("1 2 x 4".split(' ')).is_none());
}

#[test]
fn stat_lines_out_of_order_are_sorted_and_the_last_of_an_id_wins() {
    let text = "cpu2 1 0 0 7 0 0 0\ncpu0 1 0 0 5 0 0 0\ncpu2 1 0 0 9 0 0 0\ncpu1 1 0 0 6 0 0 0\n";
    let (_, _, per) = parsed(text);
    let idle: Vec<(u32, u64)> = per.iter().map(|&(id, t)| (id, t.idle)).collect();
    assert_eq!(idle, vec![(0, 5), (1, 6), (2, 9)]);
}
