//! One interval as a scrape page: every gauge `dump --format openmetrics` writes for the
//! interval (same names, base units; see `record::openmetrics::points`), without timestamps,
//! plus what only a live feed knows: each disk's learned await baseline, the reader's problem
//! count and the interval. Rendered once per interval; the OpenMetrics form only adds its end.

use crate::assess::Assessed;
use crate::findings::{Baselines, Thresholds};
use crate::pane::JSON_KEYS;
use crate::record::openmetrics::{om_value_into as value, points, traced_points};
use crate::record::openmetrics::{Leaves, Node, Origin};
use foldhash::HashMap;
use std::sync::Arc;

/// Left out of the live feed: per-process series (a pid is a new series every time a process
/// starts; `perftop_finding_active` and its culprits in `dump` name them instead).
const NOT_EXPORTED: [&str; 1] = ["processes"];

/// Walked afresh every interval, never from the template: a finding's message changes with its
/// numbers, so its interval's shape would seldom be the last one's.
const FINDINGS: &str = "findings";

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

/// The series the last full walk made, in order, and where each took its value: while an
/// interval's shape (`Leaves`) is the last walk's, its page is the same series with this
/// interval's values, and the tree is neither built nor walked. On the 2-vCPU VM the tree and
/// the walk were ~450 µs of an interval's ~1.9 ms (2026-12-07).
struct Template {
    shape: Vec<u8>,
    /// Each series: its family, its place among the family's series, where its value is.
    series: Vec<(usize, usize, Origin)>,
    /// The walk's families, in first-seen order, and how many series each had.
    families: Vec<(usize, usize)>,
}

/// Renders interval after interval, keeping what does not change between them (the families,
/// their headers, the buffers, the last walk's template): the page's ~280 families and ~900
/// series were a string or more each, every interval, and the walk and the text a quarter
/// of `perftop export`'s CPU (`perf record`, 2026-11-27). A fresh `Renderer` renders the
/// same page as a kept one.
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
    leaves: Leaves,
    template: Option<Template>,
    /// Intervals whose walked panes came from the template.
    replayed: u64,
}

impl Renderer {
    /// Takes back a page replaced by a newer one: its buffer is reused when no scraper still
    /// holds it.
    pub fn recycle(&mut self, page: Arc<Page>) {
        if let Ok(p) = Arc::try_unwrap(page) {
            self.spare = Some(p.text);
        }
    }

    /// Adds a series; says its family and its place among the family's series.
    fn add(&mut self, family: &str, labels: &str, v: f64) -> (usize, usize) {
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
        (i, f.series.len() - 1)
    }

    /// The walked panes' series from the template, with this interval's leaves, when the
    /// interval's shape is the template's. Says whether it was.
    fn replay(&mut self) -> bool {
        let Some(t) = &self.template else {
            return false;
        };
        if t.shape != self.leaves.shape {
            return false;
        }
        for &(i, n) in &t.families {
            let f = &mut self.families[i];
            f.seen = self.interval;
            f.series.truncate(n);
            let end = f.series.last().map_or(0, |s| s.1);
            f.labels.truncate(end);
            self.order.push(i);
        }
        for &(i, at, from) in &t.series {
            if let Some(s) = self.families[i].series.get_mut(at) {
                s.2 = from.value(&self.leaves.values);
            }
        }
        self.replayed += 1;
        true
    }

    /// Walks the tree of `keys` and keeps what it made as the template, when every value it
    /// took from a leaf is that leaf's in `self.leaves` (they are counted alike; a shape
    /// they might count apart in is never replayed).
    fn walk(&mut self, d: &Assessed, keys: &[&str], shaped: bool) {
        self.template = None;
        let Ok(v) = Node::of_fields(d, keys) else {
            return;
        };
        let mut series = Vec::new();
        let mut same = shaped;
        // The sink never fails; an error here would be a bug in the walk, and the page keeps
        // what was added.
        let _ = traced_points(&v, keys, &mut |f, l, x, from| {
            let (i, at) = self.add(f, l, x);
            same &= from.value(&self.leaves.values).to_bits() == x.to_bits();
            series.push((i, at, from));
            Ok(())
        });
        if same {
            let families = self
                .order
                .iter()
                .map(|&i| (i, self.families[i].series.len()))
                .collect();
            self.template = Some(Template {
                shape: std::mem::take(&mut self.leaves.shape),
                series,
                families,
            });
        }
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
            .filter(|k| !NOT_EXPORTED.contains(k) && *k != FINDINGS)
            .collect();
        let shaped = self.leaves.fill(d, &keys).is_ok();
        if !(shaped && self.replay()) {
            self.walk(d, &keys, shaped);
        }
        if let Ok(v) = Node::of_fields(d, &[FINDINGS]) {
            let _ = points(&v, &[FINDINGS], &mut |f, l, x| {
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
        assert_eq!(kept.replayed, 0, "a shape changed every interval");
        // The same shape again: from the template.
        let last = kept.render(&pages[4], &b, &t, 0).text;
        assert_eq!(kept.replayed, 1);
        assert!(
            last.contains("perftop_host_loadavg{index=\"0\"} 0.5\n"),
            "{last}"
        );
        assert!(
            last.contains("perftop_host_loadavg{index=\"2\"} 4096\n"),
            "{last}"
        );
    }

    /// A real interval: one whose shape is the last one's is rendered from the template with
    /// its own values, and a changed shape is walked again; each page is the one a fresh
    /// renderer writes.
    #[test]
    fn the_template_renders_the_walks_page() {
        use crate::root::Root;
        use crate::source::Reader;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/real/h100vm-16cpu-load");
        let read = |n: &str| Reader::new(Root::new(dir.join(n))).sample();
        let (t, b) = (Thresholds::default(), Baselines::new());
        let first = assess(Some(&read("t0")), &read("t1"), &t);
        let mut busier = first.clone();
        busier.derived.host.loadavg = Some([9.5, 4.25, 1.0]);
        for (i, c) in busier.derived.cpus.iter_mut().enumerate() {
            c.user_pct = Some(50.0 + i as f64);
        }
        let disk = busier.derived.disks.iter_mut().find(|d| d.util.is_some());
        let disk = disk.expect("a disk with a utilisation");
        disk.util = Some(87.5);
        let name = disk.disk_device.clone();
        let mut fewer = busier.clone();
        fewer.derived.disks.pop();
        let mut kept = Renderer::default();
        let mut replayed = Vec::new();
        for (i, d) in [&first, &busier, &fewer, &busier, &first]
            .into_iter()
            .enumerate()
        {
            let before = kept.replayed;
            let page = kept.render(d, &b, &t, i).text;
            replayed.push(kept.replayed > before);
            assert_eq!(
                page,
                Renderer::default().render(d, &b, &t, i).text,
                "interval {i}"
            );
        }
        assert_eq!(replayed, [false, true, false, false, true]);
        let page = kept.render(&busier, &b, &t, 0).text;
        assert!(
            page.contains("perftop_host_loadavg{index=\"0\"} 9.5\n"),
            "{page}"
        );
        let util = format!("perftop_disks_util_ratio{{disk_device=\"{name}\"");
        let line = page
            .lines()
            .find(|l| l.starts_with(&util))
            .expect("the disk's util");
        assert!(line.ends_with(" 0.875"), "{line}");
    }
}
