//! One interval as a scrape page: every gauge `dump --format openmetrics` writes for the
//! interval (same names, base units; see `record::openmetrics::points`), without timestamps,
//! plus what only a live feed knows: each disk's learned await baseline, the reader's problem
//! count and the interval. Rendered once per interval; the OpenMetrics form only adds its end.

use crate::assess::Assessed;
use crate::findings::{Baselines, Thresholds};
use crate::pane::JSON_KEYS;
use crate::record::openmetrics::{om_value_into as value, points, Node};
use foldhash::HashMap;
use std::sync::Arc;

/// Left out of the live feed: per-process series (a pid is a new series every time a process
/// starts; `perftop_finding_active` and its culprits in `dump` name them instead).
const NOT_EXPORTED: [&str; 1] = ["processes"];

/// One interval, rendered: Prometheus text format 0.0.4 (node_exporter's textfile collector,
/// plain scrapes). OpenMetrics 1.0 (`Accept: application/openmetrics-text`) is the same text
/// followed by `openmetrics::EOF`, sent after it rather than kept as a second copy.
#[derive(Debug, Clone)]
pub struct Page {
    pub text: String,
}

/// Past this many families the renderer starts again: they are field paths, but a pane whose
/// JSON had data as keys must not make it grow without end.
const MAX_FAMILIES: usize = 4096;

/// One family as it was last rendered: its `# HELP`/`# TYPE` lines, worked out once, and this
/// interval's series (label text in one buffer, no string a series).
struct Family {
    name: String,
    header: String,
    /// The interval it was last seen in: a family not seen this interval is not written.
    seen: u64,
    labels: String,
    series: Vec<(usize, usize, f64)>,
}

/// Renders interval after interval, keeping what does not change between them (the families,
/// their headers, the buffers): the page's ~280 families and ~700 series were a string or
/// more each, every interval, and the walk and the text a quarter of `perftop export`'s CPU
/// (`perf record`, 2026-11-27). A fresh `Renderer` renders the same page as a kept one.
#[derive(Default)]
pub struct Renderer {
    index: HashMap<String, usize>,
    families: Vec<Family>,
    /// This interval's families, in first-seen order.
    order: Vec<usize>,
    interval: u64,
    /// The buffer of a page no scraper holds any more, for the next page: a ~90 KB allocation
    /// and free an interval otherwise, and glibc consolidates its free lists on each such free.
    spare: Option<String>,
}

impl Renderer {
    /// Takes back a page replaced by a newer one: its buffer is reused when no scraper still
    /// holds it.
    pub fn recycle(&mut self, page: Arc<Page>) {
        if let Ok(p) = Arc::try_unwrap(page) {
            self.spare = Some(p.text);
        }
    }

    fn add(&mut self, family: &str, labels: &str, v: f64) {
        let i = match self.index.get(family) {
            Some(i) => *i,
            None => {
                let mut header = String::from("# HELP ");
                header.push_str(family);
                header.push(' ');
                help(family, &mut header);
                header.push_str("\n# TYPE ");
                header.push_str(family);
                header.push_str(" gauge\n");
                self.families.push(Family {
                    name: family.to_string(),
                    header,
                    seen: 0,
                    labels: String::new(),
                    series: Vec::new(),
                });
                self.index
                    .insert(family.to_string(), self.families.len() - 1);
                self.families.len() - 1
            }
        };
        let f = &mut self.families[i];
        if f.seen != self.interval {
            f.seen = self.interval;
            f.labels.clear();
            f.series.clear();
            self.order.push(i);
        }
        let start = f.labels.len();
        f.labels.push_str(labels);
        f.series.push((start, f.labels.len(), v));
    }

    /// The page of interval `d`. `baselines` are the disks' learned awaits (shown once learned
    /// from `disk_baseline_min_samples` intervals, as the disk rule uses them).
    pub fn render(
        &mut self,
        d: &Assessed,
        baselines: &Baselines,
        t: &Thresholds,
        problems: usize,
    ) -> Page {
        if self.families.len() > MAX_FAMILIES {
            *self = Renderer::default();
        }
        self.interval += 1;
        self.order.clear();
        let keys: Vec<&str> = JSON_KEYS
            .iter()
            .copied()
            .filter(|k| !NOT_EXPORTED.contains(k))
            .collect();
        if let Ok(v) = Node::of(d) {
            // The sink never fails; an error here would be a bug in the walk, and the page
            // keeps what was added.
            let _ = points(&v, &keys, &mut |f, l, x| {
                self.add(f, l, x);
                Ok(())
            });
        }
        for m in d.disks.iter().filter(|m| !m.partition) {
            if let Some(b) = baselines
                .get(&m.disk_device)
                .filter(|b| b.samples >= t.disk_baseline_min_samples)
            {
                let labels = format!("{{disk_device=\"{}\"}}", m.disk_device.replace('"', ""));
                self.add(
                    "perftop_disk_await_baseline_seconds",
                    &labels,
                    b.await_ms / 1000.0,
                );
            }
        }
        if let Some(s) = d.interval_s {
            self.add("perftop_interval_seconds", "", s);
        }
        self.add("perftop_read_problems", "", problems as f64);
        // Written in place, no string a line: formatting was a third of the page's CPU.
        let mut text = match self.spare.take() {
            Some(mut s) => {
                s.clear();
                s
            }
            None => String::with_capacity(96 << 10),
        };
        for &i in &self.order {
            let f = &self.families[i];
            text.push_str(&f.header);
            for &(a, b, v) in &f.series {
                text.push_str(&f.name);
                text.push_str(f.labels.get(a..b).unwrap_or(""));
                text.push(' ');
                value(v, &mut text);
                text.push('\n');
            }
        }
        Page { text }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assess::assess;
    use crate::sample::Sample;

    fn interval(loadavg: Option<[f32; 3]>) -> Assessed {
        let mut s = Sample::default();
        s.host.loadavg = loadavg;
        assess(None, &s, &Thresholds::default())
    }

    /// A renderer kept from interval to interval, given its pages back, writes each page as a
    /// fresh one would, as families come, go (not written while absent) and come back.
    #[test]
    fn a_kept_renderer_renders_each_page_as_a_fresh_one() {
        let (t, b) = (Thresholds::default(), Baselines::new());
        let pages = [
            interval(Some([2.7, 0.1, 3.12])),
            interval(None),
            interval(Some([1.0, 2.0, 3.0])),
            interval(None),
            interval(Some([0.5, 0.0, 4096.0])),
        ];
        let mut kept = Renderer::default();
        for (i, d) in pages.iter().enumerate() {
            let rendered = kept.render(d, &b, &t, i);
            let page = rendered.text.clone();
            // Its buffer holds this page when the next is written into it.
            kept.recycle(Arc::new(rendered));
            let fresh = Renderer::default().render(d, &b, &t, i).text;
            assert_eq!(page, fresh, "interval {i}");
            let load = d.host.loadavg.is_some();
            assert_eq!(
                page.contains("# TYPE perftop_host_loadavg gauge\n"),
                load,
                "{page}"
            );
            assert_eq!(
                page.contains("perftop_host_loadavg{index=\"2\"}"),
                load,
                "{page}"
            );
            assert!(
                page.contains(&format!("\nperftop_read_problems {i}\n")),
                "{page}"
            );
        }
        let last = kept.render(&pages[4], &b, &t, 0).text;
        assert!(
            last.contains("perftop_host_loadavg{index=\"0\"} 0.5\n"),
            "{last}"
        );
        assert!(
            last.contains("perftop_host_loadavg{index=\"2\"} 4096\n"),
            "{last}"
        );
    }
}
