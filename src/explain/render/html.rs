//! The HTML report: one self-contained file to attach to a postmortem — no script, no font,
//! no network; every chart inline SVG. The episode list, per episode a chart of each of its key
//! metrics over the window (threshold dashed, the episode shaded, tweak and OOM markers), and a
//! timeline of every episode by family.

use super::super::families::{key_metric, FAMILIES};
use super::super::metrics::{index, show, METRICS};
use super::super::{Episode, Report};
use super::{causes, clock, culprit, normal, peak, title, when};
use crate::record::format_rfc3339;

const W: f64 = 760.0;
const H: f64 = 150.0;
/// Left margin (the y labels) and the bottom one (the x labels).
const L: f64 = 60.0;
const B: f64 = 20.0;
/// At most this many points a line: a day at 1 s is cut into buckets, each drawn at its max.
const POINTS: usize = 760;

/// Text for HTML: `&`, `<`, `>`, quotes escaped; controls gone (the one sanitizer).
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in crate::safe::line(s).chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn x_of(r: &Report, ms: i64) -> f64 {
    let span = (r.to_ms - r.from_ms).max(1) as f64;
    L + (W - L - 10.0) * ((ms - r.from_ms) as f64 / span).clamp(0.0, 1.0)
}

/// The metrics an episode's charts show: the key metric of each of its rules, once each.
fn chart_metrics(e: &Episode) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for id in &e.ids {
        if let Some(m) = key_metric(e.family, std::slice::from_ref(id)).and_then(index) {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out.truncate(3);
    out
}

/// One chart: metric `m` over the window, episode `e` shaded.
fn chart(r: &Report, e: &Episode, m: usize) -> String {
    let metric = &METRICS[m];
    let threshold = metric.threshold(&r.thresholds);
    let buckets = r.rows.len().div_ceil(POINTS).max(1);
    let pts: Vec<(i64, f64)> = r
        .rows
        .chunks(buckets)
        .filter_map(|c| {
            let v = c
                .iter()
                .map(|x| f64::from(x.vals[m]))
                .filter(|v| v.is_finite())
                .reduce(f64::max)?;
            Some((c[c.len() / 2].end_ms, v))
        })
        .collect();
    let top = pts
        .iter()
        .map(|p| p.1)
        .chain(threshold)
        .fold(0.0_f64, f64::max)
        .max(1e-9)
        * 1.1;
    let y = |v: f64| (H - B) - (H - B - 10.0) * (v / top).clamp(0.0, 1.0);
    let mut s = format!(
        "<figure><figcaption>{} ({})</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" \
         width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{}\">\n",
        esc(metric.name),
        esc(if metric.unit.is_empty() {
            "count"
        } else {
            metric.unit
        }),
        esc(metric.name)
    );
    // The episode, shaded.
    let (x0, x1) = (x_of(r, e.start_ms), x_of(r, e.end_ms));
    s.push_str(&format!(
        "<rect class=\"episode\" x=\"{x0:.1}\" y=\"10\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#f6c90e\" fill-opacity=\"0.3\"/>\n",
        (x1 - x0).max(1.0),
        H - B - 10.0
    ));
    // Axes and labels.
    s.push_str(&format!(
        "<line x1=\"{L}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"#555\"/>\n\
         <text x=\"{2}\" y=\"{3}\" font-size=\"10\" text-anchor=\"end\">{4}</text>\n\
         <text x=\"{2}\" y=\"{0}\" font-size=\"10\" text-anchor=\"end\">0</text>\n\
         <text x=\"{L}\" y=\"{5}\" font-size=\"10\">{6}</text>\n\
         <text x=\"{1}\" y=\"{5}\" font-size=\"10\" text-anchor=\"end\">{7}</text>\n",
        H - B,
        W - 10.0,
        L - 4.0,
        y(top / 1.1) + 4.0,
        // The unit is in the caption; the margin holds the number only.
        esc(&show(top / 1.1, "")),
        H - 4.0,
        clock(r.from_ms),
        clock(r.to_ms)
    ));
    if let Some(t) = threshold {
        s.push_str(&format!(
            "<line class=\"threshold\" x1=\"{L}\" y1=\"{0:.1}\" x2=\"{1}\" y2=\"{0:.1}\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/>\n\
             <text x=\"{1}\" y=\"{2:.1}\" font-size=\"10\" fill=\"#c0392b\" text-anchor=\"end\">threshold {3}</text>\n",
            y(t),
            W - 10.0,
            y(t) - 3.0,
            esc(&show(t, metric.unit))
        ));
    }
    for ev in &r.events {
        let x = x_of(r, ev.time_ms);
        let color = if ev.kind == "oom_kill" {
            "#8e44ad"
        } else {
            "#2471a3"
        };
        s.push_str(&format!(
            "<line class=\"marker {0}\" x1=\"{x:.1}\" y1=\"10\" x2=\"{x:.1}\" y2=\"{1}\" stroke=\"{color}\"/>\n\
             <text x=\"{x:.1}\" y=\"9\" font-size=\"9\" fill=\"{color}\">{2}</text>\n",
            ev.kind,
            H - B,
            esc(&ev.text)
        ));
    }
    let line: Vec<String> = pts
        .iter()
        .map(|(t, v)| format!("{:.1},{:.1}", x_of(r, *t), y(*v)))
        .collect();
    s.push_str(&format!(
        "<polyline class=\"series\" fill=\"none\" stroke=\"#1e8449\" stroke-width=\"1.5\" points=\"{}\"/>\n</svg></figure>\n",
        line.join(" ")
    ));
    s
}

/// Every episode as a span on its family's row.
fn timeline(r: &Report) -> String {
    let fams: Vec<usize> = {
        let mut f: Vec<usize> = r.episodes.iter().map(|e| e.family).collect();
        f.sort_unstable();
        f.dedup();
        f
    };
    let h = 20.0 * fams.len() as f64 + 24.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" role=\"img\" aria-label=\"timeline\">\n"
    );
    for (row, f) in fams.iter().enumerate() {
        let yy = 4.0 + 20.0 * row as f64;
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text>\n",
            L - 4.0,
            yy + 12.0,
            esc(FAMILIES[*f].name)
        ));
        for (i, e) in r
            .episodes
            .iter()
            .enumerate()
            .filter(|(_, e)| e.family == *f)
        {
            let (x0, x1) = (x_of(r, e.start_ms), x_of(r, e.end_ms));
            let color = match e.severity.as_str() {
                "crit" => "#c0392b",
                "warn" => "#e67e22",
                _ => "#5d6d7e",
            };
            s.push_str(&format!(
                "<a href=\"#ep{}\"><rect class=\"span\" x=\"{x0:.1}\" y=\"{yy:.1}\" width=\"{:.1}\" height=\"16\" fill=\"{color}\"><title>{}</title></rect></a>\n",
                i + 1,
                (x1 - x0).max(2.0),
                esc(&title(e))
            ));
        }
    }
    s.push_str(&format!(
        "<text x=\"{L}\" y=\"{0:.1}\" font-size=\"10\">{1}</text><text x=\"{2}\" y=\"{0:.1}\" font-size=\"10\" text-anchor=\"end\">{3}</text>\n</svg>\n",
        h - 4.0,
        clock(r.from_ms),
        W - 10.0,
        clock(r.to_ms)
    ));
    s
}

pub fn render(r: &Report) -> String {
    let mut o = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width\">\n",
    );
    o.push_str(&format!(
        "<title>perftop explain: {}</title>\n<style>body{{font-family:sans-serif;max-width:800px;margin:1em auto}}\
         li{{margin:.2em 0}}figure{{margin:.5em 0}}figcaption{{font-size:.85em;color:#444}}\
         .crit{{color:#c0392b}}.warn{{color:#e67e22}}</style></head><body>\n",
        esc(r.host.as_deref().unwrap_or("host"))
    ));
    o.push_str(&format!(
        "<h1>perftop explain</h1>\n<p>{} on {}, {} .. {}, {} intervals.</p>\n",
        esc(&r.path),
        esc(r.host.as_deref().unwrap_or("an unnamed host")),
        format_rfc3339(r.from_ms),
        format_rfc3339(r.to_ms),
        r.intervals
    ));
    for u in &r.unreadable {
        o.push_str(&format!("<p>Could not read: {}</p>\n", esc(u)));
    }
    if !r.unknown.is_empty() {
        o.push_str(&format!(
            "<p>Not recorded (unknown, not zero): {}</p>\n",
            esc(&r.unknown.join(", "))
        ));
    }
    o.push_str("<h2>Timeline</h2>\n");
    o.push_str(&timeline(r));
    o.push_str("<h2>Episodes</h2>\n<ol id=\"episodes\">\n");
    for (i, e) in r.episodes.iter().enumerate() {
        o.push_str(&format!(
            "<li><a href=\"#ep{}\">{}</a> <span class=\"{}\">{}</span>, {}</li>\n",
            i + 1,
            esc(&title(e)),
            e.severity.as_str(),
            e.severity.as_str(),
            esc(&when(e))
        ));
    }
    o.push_str("</ol>\n");
    if r.episodes.is_empty() {
        o.push_str("<p>No episodes: no finding held in this window.</p>\n");
    }
    for (i, e) in r.episodes.iter().enumerate() {
        o.push_str(&format!(
            "<section class=\"episode\" id=\"ep{}\">\n<h3>{}. {} <span class=\"{}\">({})</span></h3>\n<ul>\n",
            i + 1,
            i + 1,
            esc(&title(e)),
            e.severity.as_str(),
            e.severity.as_str()
        ));
        let mut item = |k: &str, v: &str| o.push_str(&format!("<li><b>{k}</b>: {}</li>\n", esc(v)));
        item("when", &when(e));
        item("what", &e.summary);
        if let Some(p) = peak(e) {
            item("peak", &p);
        }
        if let Some(n) = normal(e, r) {
            item("normal", &n);
        }
        for c in &e.culprits {
            item("who", &culprit(c));
        }
        for c in causes(e) {
            item("cause", &c);
        }
        for n in &e.notes {
            item("note", n);
        }
        for t in &e.tweaks {
            item("tweak", &t.preview);
        }
        o.push_str("</ul>\n");
        for m in chart_metrics(e) {
            o.push_str(&chart(r, e, m));
        }
        o.push_str("</section>\n");
    }
    if !r.events.is_empty() {
        o.push_str("<h2>What was done</h2>\n<ul>\n");
        for ev in &r.events {
            o.push_str(&format!(
                "<li>{} {}: {}</li>\n",
                clock(ev.time_ms),
                esc(ev.kind),
                esc(&ev.text)
            ));
        }
        o.push_str("</ul>\n");
    }
    o.push_str("</body></html>\n");
    o
}
