//! The JSON contract: `{"from","to","host","episodes":[{"ids","start","end","peak":{"time",
//! "metric","value"},"severity","summary","culprits","caused_by","baseline","tweaks"}],
//! "events"}`, times in RFC 3339 UTC as `dump`'s `time`. Indices in `caused_by` count from 0
//! in `episodes`. Unknown is `null`, never 0.

use super::super::families::FAMILIES;
use super::super::Report;
use crate::record::format_rfc3339;
use serde_json::{json, Value};

fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

pub fn value(r: &Report) -> Value {
    let episodes: Vec<Value> = r
        .episodes
        .iter()
        .map(|e| {
            json!({
                "ids": e.ids,
                "family": FAMILIES[e.family].name,
                "start": format_rfc3339(e.start_ms),
                "end": format_rfc3339(e.end_ms),
                "open_start": e.open_start,
                "open_end": e.open_end,
                "peak": e.peak.as_ref().map(|p| json!({
                    "time": format_rfc3339(p.time_ms),
                    "metric": p.metric,
                    "value": num(p.value),
                })),
                "severity": e.severity.as_str(),
                "summary": e.summary,
                "findings": e.lines.iter().map(|(id, s, m)| json!({
                    "id": id, "severity": s.as_str(), "message": m,
                })).collect::<Vec<_>>(),
                "culprits": e.culprits.iter().map(|c| json!({
                    "comm": c.comm,
                    "pid": c.pid,
                    "cgroup": c.cgroup,
                    "metric": c.metric,
                    "max": num(c.max),
                    "tasks": c.tasks,
                    "intervals": c.intervals,
                    "finding": c.finding,
                })).collect::<Vec<_>>(),
                "caused_by": e.links.iter().map(|l| l.cause).collect::<Vec<_>>(),
                "causes": e.links.iter().map(|l| json!({
                    "episode": l.cause, "mechanism": l.words, "evidence": l.evidence,
                })).collect::<Vec<_>>(),
                "baseline": e.normal.as_ref().map(|(m, n)| json!({
                    "metric": m,
                    "median": num(n.median),
                    "p95": num(n.p95),
                    "quiet_intervals": n.quiet,
                    "sampled": n.sampled,
                    "over": n.over.map(|(a, b)| json!({
                        "from": format_rfc3339(a), "to": format_rfc3339(b),
                    })),
                })),
                "notes": e.notes,
                "tweaks": e.tweaks.iter().map(|t| json!({
                    "name": t.name, "preview": t.preview,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "from": format_rfc3339(r.from_ms),
        "to": format_rfc3339(r.to_ms),
        "host": r.host,
        "recording": r.path,
        "intervals": r.intervals,
        "decoded_intervals": r.read.decoded,
        "unreadable": r.unreadable,
        "unknown_metrics": r.unknown,
        "episodes": episodes,
        "events": r.events.iter().map(|e| json!({
            "time": format_rfc3339(e.time_ms), "kind": e.kind, "text": e.text,
        })).collect::<Vec<_>>(),
    })
}

pub fn render(r: &Report) -> String {
    let mut s = serde_json::to_string_pretty(&value(r)).unwrap_or_else(|_| "{}".to_string());
    s.push('\n');
    // serde_json leaves DEL and C1 controls raw; the one sanitizer escapes them.
    crate::safe::json(&s).into_owned()
}
