//! The TCP/UDP line of the Softirq/NIC pane (established connections, listen-queue overflows,
//! retransmit share, timeouts, TIME_WAIT and orphans, socket memory against `tcp_mem`, UDP
//! receive-buffer errors), its headline alarms, and a NIC's link in words.

use super::model::{cell, Block, Cells, Level};
use super::Ctx;
use crate::derive::{Derived, NicLinkMetrics};
use crate::units::{compact, kb, pct};

/// Headline cells, only while something is wrong (the 80-column headline has no room for a
/// healthy stack): listen overflows, a retransmit share past `net.retrans`'s threshold.
pub fn headline(d: &Derived, x: &Ctx) -> Cells {
    let t = x.levels.t;
    let mut s = Vec::new();
    let Some(m) = &d.tcp else { return s };
    if let Some(o) = m.listen_overflows_per_s.filter(|&o| o > 0.0) {
        s.push(cell("  lovf ", Level::Text));
        s.push(cell(
            format!("{}/s", compact(Some(o))),
            overflow_level(Some(o), t.net_listen_overflow_per_s),
        ));
    }
    let busy = m
        .out_segs_per_s
        .is_some_and(|o| o >= t.net_retrans_min_segs_per_s);
    if let Some(r) = m.retrans_pct.filter(|&r| busy && r >= t.net_retrans_pct) {
        s.push(cell("  retx ", Level::Text));
        s.push(cell(
            format!("{r:.1}%"),
            super::levels::level(Some(r), t.net_retrans_pct, t.net_retrans_pct_crit),
        ));
    }
    s
}

/// `TCP lovf 0/s  retx 0.1% of 1.2k/s  tmo 0/s  est 12 tw 3  mem 588K  UDP rcvbuf 0/s` (segments
/// out per second; zoomed also orphans and memory against `tcp_mem`'s max); nothing when the stack was not read (an older recording).
pub fn line(d: &Derived, x: &Ctx) -> Option<Block> {
    let t = x.levels.t;
    let m = d.tcp.as_ref()?;
    let n = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    let busy = m
        .out_segs_per_s
        .is_some_and(|o| o >= t.net_retrans_min_segs_per_s);
    let retx_level = if busy {
        super::levels::level(m.retrans_pct, t.net_retrans_pct, t.net_retrans_pct_crit)
    } else {
        Level::Text
    };
    // Most telling first: a narrow screen cuts the tail.
    let mut cells = vec![
        cell("TCP lovf ", Level::Text),
        cell(
            format!("{}/s", compact(m.listen_overflows_per_s)),
            overflow_level(m.listen_overflows_per_s, t.net_listen_overflow_per_s),
        ),
        cell("  retx ", Level::Text),
        cell(format!("{}%", pct(m.retrans_pct)), retx_level),
        cell(format!(" of {}/s", compact(m.out_segs_per_s)), Level::Text),
        cell(
            format!("  tmo {}/s", compact(m.timeouts_per_s)),
            Level::Text,
        ),
        cell(
            format!("  est {} tw {}", n(m.curr_estab), n(m.tw)),
            Level::Text,
        ),
    ];
    cells.push(cell(format!("  mem {}", kb(m.mem_kb)), Level::Text));
    cells.extend([
        cell("  UDP rcvbuf ", Level::Text),
        cell(
            format!("{}/s", compact(m.udp_rcvbuf_errors_per_s)),
            super::levels::level(
                m.udp_rcvbuf_errors_per_s,
                t.udp_rcvbuf_errors_per_s,
                f64::INFINITY,
            ),
        ),
    ]);
    if let Some(secs) = m.table_secs {
        // A quiet host sampled fast reads these in turns: rates over their own two reads.
        cells.push(cell(format!("  (over {secs:.1} s: quiet)"), Level::Text));
    }
    if x.detail {
        cells.push(cell(format!("  orphans {}", n(m.orphan)), Level::Text));
        if let Some(p) = m.mem_of_max_pct {
            cells.push(cell(format!(", mem {p:.1}% of tcp_mem max"), Level::Text));
        }
    }
    Some(Block::Line(cells))
}

/// Any listen overflow is worth a look; at `net.listen_overflow`'s rate it is the finding's crit.
fn overflow_level(v: Option<f64>, crit: f64) -> Level {
    match v {
        Some(o) if o >= crit => Level::Crit,
        Some(o) if o > 0.0 => Level::Warn,
        Some(_) => Level::Text,
        None => Level::Dim,
    }
}

/// A NIC's link in a few characters: `up 10G full`, `down`, `up` (a virtual NIC: no speed).
pub fn link_text(l: &NicLinkMetrics) -> String {
    let mut s = l.operstate.clone().unwrap_or_else(|| "-".into());
    if let Some(mb) = l.speed_mbps {
        if mb >= 1000 && mb % 1000 == 0 {
            s.push_str(&format!(" {}G", mb / 1000));
        } else {
            s.push_str(&format!(" {mb}M"));
        }
    }
    if let Some(d) = &l.duplex {
        s.push(' ');
        s.push_str(d);
    }
    s
}
