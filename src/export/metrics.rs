//! One interval as a scrape page: every gauge `dump --format openmetrics` writes for the
//! interval (same names, base units; see `record::openmetrics::points`), without timestamps,
//! plus what only a live feed knows: each disk's learned await baseline, the reader's problem
//! count and the interval. Rendered once per interval in both formats a scraper may ask for.

use crate::assess::Assessed;
use crate::findings::{Baselines, Thresholds};
use crate::pane::JSON_KEYS;
use crate::record::openmetrics::{om_value_into as value, points};
use foldhash::HashMap;

/// Left out of the live feed: per-process series (a pid is a new series every time a process
/// starts; `perftop_finding_active` and its culprits in `dump` name them instead).
const NOT_EXPORTED: [&str; 1] = ["processes"];

/// One interval, rendered.
#[derive(Debug, Clone)]
pub struct Page {
    /// Prometheus text format 0.0.4 (node_exporter's textfile collector, plain scrapes).
    pub text: String,
    /// OpenMetrics 1.0 (`Accept: application/openmetrics-text`): the same, ending `# EOF`.
    pub openmetrics: String,
}

/// Families in first-seen order, each with its series (labels, value).
#[derive(Default)]
struct Families {
    index: HashMap<String, usize>,
    list: Vec<(String, Vec<(String, f64)>)>,
}

impl Families {
    fn add(&mut self, family: &str, labels: &str, v: f64) {
        let i = match self.index.get(family) {
            Some(i) => *i,
            None => {
                self.list.push((family.to_string(), Vec::new()));
                self.index.insert(family.to_string(), self.list.len() - 1);
                self.list.len() - 1
            }
        };
        self.list[i].1.push((labels.to_string(), v));
    }
}

/// What `# HELP` says of a family (appended to `out`): its pane and field, and where docs/
/// explains it.
fn help(family: &str, out: &mut String) {
    let fixed = match family {
        "perftop_finding_active" => {
            "A perftop finding holds this interval (1); see perftop's docs/findings.md"
        }
        "perftop_dirty_state" => {
            "Dirty pages against the kernel's thresholds (1 for the state that holds)"
        }
        "perftop_disk_await_baseline_seconds" => {
            "The await perftop has learned for the disk (EWMA over unqueued intervals)"
        }
        _ => {
            out.push_str("perftop ");
            out.extend(family.trim_start_matches("perftop_").chars().map(|c| {
                if c == '_' {
                    ' '
                } else {
                    c
                }
            }));
            " (docs/json.md: the delta JSON contract)"
        }
    };
    out.push_str(fixed);
}

/// The page of interval `d`. `baselines` are the disks' learned awaits (shown once learned
/// from `disk_baseline_min_samples` intervals, as the disk rule uses them).
pub fn render(d: &Assessed, baselines: &Baselines, t: &Thresholds, problems: usize) -> Page {
    let mut fams = Families::default();
    let keys: Vec<&str> = JSON_KEYS
        .iter()
        .copied()
        .filter(|k| !NOT_EXPORTED.contains(k))
        .collect();
    if let Ok(v) = serde_json::to_value(d) {
        // The sink never fails; an error here would be a bug in the walk, and the page
        // keeps what was added.
        let _ = points(&v, &keys, &mut |f, l, x| {
            fams.add(f, l, x);
            Ok(())
        });
    }
    for m in d.disks.iter().filter(|m| !m.partition) {
        if let Some(b) = baselines
            .get(&m.disk_device)
            .filter(|b| b.samples >= t.disk_baseline_min_samples)
        {
            let labels = format!("{{disk_device=\"{}\"}}", m.disk_device.replace('"', ""));
            fams.add(
                "perftop_disk_await_baseline_seconds",
                &labels,
                b.await_ms / 1000.0,
            );
        }
    }
    if let Some(s) = d.interval_s {
        fams.add("perftop_interval_seconds", "", s);
    }
    fams.add("perftop_read_problems", "", problems as f64);
    // Written in place, no string a line: formatting was a third of the page's CPU.
    let mut text = String::with_capacity(96 << 10);
    for (family, series) in &fams.list {
        text.push_str("# HELP ");
        text.push_str(family);
        text.push(' ');
        help(family, &mut text);
        text.push_str("\n# TYPE ");
        text.push_str(family);
        text.push_str(" gauge\n");
        for (labels, v) in series {
            text.push_str(family);
            text.push_str(labels);
            text.push(' ');
            value(*v, &mut text);
            text.push('\n');
        }
    }
    let openmetrics = format!("{text}# EOF\n");
    Page { text, openmetrics }
}
