//! Softirq/NIC pane: per-CPU %soft/%irq, NET_RX/NET_TX handler runs, softnet processed, drops,
//! squeezes, backlog and ksoftirqd; then per-queue IRQ placement and per-NIC packet/drop rates.

use super::{col, header_line, lcol, note, row_line, span, View};
use crate::cpulist::CpuList;
use crate::derive::{IrqQueueMetrics, SoftirqCpuMetrics};
use crate::units::{compact, pct};
use ratatui::text::{Line, Span};

fn rate(c: &SoftirqCpuMetrics, name: &str) -> Option<f64> {
    c.rates.get(name).copied().flatten()
}

fn sum(v: &View, f: fn(&SoftirqCpuMetrics) -> Option<f64>) -> Option<f64> {
    let vals: Vec<f64> = v.d.softirq_cpus.iter().filter_map(f).collect();
    (!vals.is_empty()).then(|| vals.iter().sum())
}

pub fn headline(v: &View) -> Vec<Span<'static>> {
    let t = v.theme;
    let hot =
        v.d.softirq_cpus
            .iter()
            .filter(|c| c.soft_pct.is_some())
            .max_by(|a, b| {
                a.soft_pct
                    .unwrap_or(0.0)
                    .total_cmp(&b.soft_pct.unwrap_or(0.0))
            });
    let drops = sum(v, |c| c.softnet_dropped_per_s);
    let sqz = sum(v, |c| c.softnet_squeezed_per_s);
    let nic_drops: Option<f64> = {
        let d: Vec<f64> =
            v.d.nics
                .iter()
                .filter_map(|n| Some(n.rx_drop_per_s? + n.tx_drop_per_s?))
                .collect();
        (!d.is_empty()).then(|| d.iter().sum())
    };
    let mut s = vec![span(
        format!("NET_RX {}/s", compact(sum(v, |c| rate(c, "NET_RX")))),
        t.text,
    )];
    if let Some(c) = hot {
        s.push(span(format!("  hot cpu{} ", c.cpu), t.text));
        s.push(span(
            format!("{}%", pct(c.soft_pct)),
            t.level(c.soft_pct, 30.0, 60.0),
        ));
    }
    s.push(span("  drop ", t.text));
    s.push(span(
        format!("{}/s", compact(drops)),
        t.level(drops, 0.1, 100.0),
    ));
    s.push(span(" sqz ", t.text));
    s.push(span(
        format!("{}/s", compact(sqz)),
        t.level(sqz, 1.0, 100.0),
    ));
    s.push(span(" nicdrop ", t.text));
    s.push(span(
        format!("{}/s", compact(nic_drops)),
        t.level(nic_drops, 0.1, 100.0),
    ));
    s
}

pub fn body(v: &View) -> Vec<Line<'static>> {
    let t = v.theme;
    let cols = vec![
        lcol("CPU", 5),
        col("%soft", 5),
        col("%irq", 5),
        col("NET_RX", 7),
        col("NET_TX", 7),
        col("pkts/s", 7),
        col("drop/s", 6),
        col("sqz/s", 6),
        col("bklg", 5),
        col("ksirq%", 6),
        col("TIMER", 6),
        col("BLOCK", 6),
        col("SCHED", 6),
        col("RCU", 6),
        col("rps/s", 6),
    ];
    let mut cpus: Vec<&SoftirqCpuMetrics> =
        v.d.softirq_cpus
            .iter()
            .filter(|c| c.online && v.keep(&c.cpu.to_string()))
            .collect();
    if !v.by_name() {
        let key = |c: &SoftirqCpuMetrics| {
            c.soft_pct.unwrap_or(0.0) * 1e6 + c.softnet_processed_per_s.unwrap_or(0.0)
        };
        cpus.sort_by(|a, b| key(b).total_cmp(&key(a)));
    }
    let limit = if v.detail { usize::MAX } else { 8 };
    let mut lines = vec![header_line(&cols, v.width, t)];
    let all_online = v.d.softirq_cpus.iter().filter(|c| c.online).count();
    lines.extend(v.filtered_out(cpus.len(), all_online));
    for c in cpus.iter().take(limit) {
        lines.push(row_line(
            &cols,
            vec![
                (c.cpu.to_string(), t.text),
                (pct(c.soft_pct), t.level(c.soft_pct, 30.0, 60.0)),
                (pct(c.irq_pct), t.level(c.irq_pct, 30.0, 60.0)),
                (compact(rate(c, "NET_RX")), t.text),
                (compact(rate(c, "NET_TX")), t.text),
                (compact(c.softnet_processed_per_s), t.text),
                (
                    compact(c.softnet_dropped_per_s),
                    t.level(c.softnet_dropped_per_s, 0.1, 100.0),
                ),
                (
                    compact(c.softnet_squeezed_per_s),
                    t.level(c.softnet_squeezed_per_s, 1.0, 100.0),
                ),
                (c.backlog.map_or("-".into(), |b| b.to_string()), t.text),
                (pct(c.ksoftirqd_pct), t.level(c.ksoftirqd_pct, 10.0, 50.0)),
                (compact(rate(c, "TIMER")), t.text),
                (compact(rate(c, "BLOCK")), t.text),
                (compact(rate(c, "SCHED")), t.text),
                (compact(rate(c, "RCU")), t.text),
                (compact(c.softnet_rps_per_s), t.text),
            ],
            v.width,
        ));
    }
    if cpus.len() > limit {
        lines.push(note(
            format!("  +{} CPUs hidden (Enter shows all)", cpus.len() - limit),
            t,
        ));
    }
    queues(v, &mut lines);
    nics(v, &mut lines);
    lines
}

fn queues(v: &View, lines: &mut Vec<Line<'static>>) {
    let t = v.theme;
    let mut q: Vec<&IrqQueueMetrics> =
        v.d.irq_queues
            .iter()
            .filter(|q| v.keep(&q.name) || v.keep(&q.device))
            .collect();
    if q.is_empty() {
        let why = if v.d.irq_queues.is_empty() {
            "  no per-queue IRQs recognised in /proc/interrupts".to_string()
        } else {
            format!("  no queue matches filter {:?}", v.app.filter)
        };
        lines.push(note(why, t));
        return;
    }
    if v.by_name() {
        q.sort_by_key(|x| x.irq);
    } else {
        q.sort_by(|a, b| b.per_s.unwrap_or(-1.0).total_cmp(&a.per_s.unwrap_or(-1.0)));
    }
    let cols = vec![
        lcol("queue", 22),
        col("IRQ", 5),
        col("irq/s", 6),
        lcol("on CPUs", 9),
        lcol("affinity", 10),
        lcol("effective", 9),
        col("node", 4),
    ];
    lines.push(header_line(&cols, v.width, t));
    let limit = if v.detail { usize::MAX } else { 8 };
    for x in q.iter().take(limit) {
        lines.push(row_line(
            &cols,
            vec![
                (x.name.clone(), t.text),
                (x.irq.to_string(), t.dim),
                (compact(x.per_s), t.text),
                (CpuList::from_ids(x.cpus.clone()).to_string(), t.text),
                (x.affinity.clone().unwrap_or_else(|| "-".into()), t.dim),
                (
                    x.effective_affinity.clone().unwrap_or_else(|| "-".into()),
                    t.text,
                ),
                (x.node.map_or("-".into(), |n| n.to_string()), t.dim),
            ],
            v.width,
        ));
    }
    if q.len() > limit {
        lines.push(note(format!("  +{} queues hidden", q.len() - limit), t));
    }
}

fn nics(v: &View, lines: &mut Vec<Line<'static>>) {
    let t = v.theme;
    let cols = vec![
        lcol("NIC", 10),
        col("rxpkt/s", 7),
        col("txpkt/s", 7),
        col("rxkB/s", 7),
        col("txkB/s", 7),
        col("rxdrop", 6),
        col("txdrop", 6),
        col("node", 4),
        lcol("queues", 9),
    ];
    let list: Vec<_> =
        v.d.nics
            .iter()
            .filter(|n| n.name != "lo" && v.keep(&n.name))
            .collect();
    if list.is_empty() {
        return;
    }
    lines.push(header_line(&cols, v.width, t));
    for n in list {
        let rps = n
            .rps_cpus
            .iter()
            .filter(|m| m.as_deref().is_some_and(|m| !m.is_empty()))
            .count();
        lines.push(row_line(
            &cols,
            vec![
                (n.name.clone(), t.text),
                (compact(n.rx_packets_per_s), t.text),
                (compact(n.tx_packets_per_s), t.text),
                (compact(n.rx_kb_per_s), t.text),
                (compact(n.tx_kb_per_s), t.text),
                (
                    compact(n.rx_drop_per_s),
                    t.level(n.rx_drop_per_s, 0.1, 100.0),
                ),
                (
                    compact(n.tx_drop_per_s),
                    t.level(n.tx_drop_per_s, 0.1, 100.0),
                ),
                (n.numa_node.map_or("-".into(), |x| x.to_string()), t.dim),
                (
                    format!(
                        "{}/{}{}",
                        n.rx_queues,
                        n.tx_queues,
                        if rps > 0 { " rps" } else { "" }
                    ),
                    t.text,
                ),
            ],
            v.width,
        ));
    }
}
