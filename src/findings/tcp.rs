//! TCP/UDP stack rules: `net.listen_overflow` (an accept queue full: connections dropped while
//! the box looks idle), `net.retrans` (segments sent again), `udp.rcvbuf` (datagrams dropped
//! for want of receive buffer).

use super::{raise, Hit, Severity, Thresholds};
use crate::derive::Derived;
use crate::units::compact;

pub fn listen_overflow(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let m = d.tcp.as_ref()?;
    let ovf = m
        .listen_overflows_per_s
        .filter(|&v| v >= t.net_listen_overflow_per_s)?;
    // The application's own listen() backlog caps what somaxconn allows: the knob says so.
    // The fullest listener, when the sample read them, says which port.
    let msg = match m.listeners.first() {
        Some(l) => format!(
            "{} listen overflows/s: :{} accept queue {} full, apps time out",
            compact(Some(ovf)),
            l.port,
            l.queue
        ),
        None => format!(
            "{} listen overflows/s: accept queue full, apps time out, box looks idle",
            compact(Some(ovf))
        ),
    };
    Some(raise(Severity::Crit, Some("net.core.somaxconn"), msg))
}

pub fn retrans(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let m = d.tcp.as_ref()?;
    let out = m
        .out_segs_per_s
        .filter(|&o| o >= t.net_retrans_min_segs_per_s)?;
    let pct = m.retrans_pct.filter(|&p| p >= t.net_retrans_pct)?;
    let sev = if pct >= t.net_retrans_pct_crit {
        Severity::Crit
    } else {
        Severity::Warn
    };
    let msg = format!(
        "TCP retransmits {pct:.1}% of {} segments/s out ({}/s, {} timeouts/s)",
        compact(Some(out)),
        compact(m.retrans_segs_per_s),
        compact(m.timeouts_per_s)
    );
    Some(raise(sev, None, msg))
}

pub fn udp_rcvbuf(d: &Derived, t: &Thresholds) -> Option<Hit> {
    let m = d.tcp.as_ref()?;
    let e = m
        .udp_rcvbuf_errors_per_s
        .filter(|&v| v >= t.udp_rcvbuf_errors_per_s)?;
    let msg = format!(
        "{} UDP datagrams/s dropped: socket receive buffers full (app too slow)",
        compact(Some(e))
    );
    Some(raise(Severity::Warn, Some("net.core.rmem_max"), msg))
}
