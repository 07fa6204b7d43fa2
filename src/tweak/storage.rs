//! Per-disk knobs of the storage stack, named after the device like `irq.N` and listed in
//! `tweak list` and the knob menu:
//! `disk.DEV.scheduler` (choices: the bracketed list of `queue/scheduler`, common to every
//! target), `disk.DEV.read_ahead_kb`, `disk.DEV.nr_requests` and `scsi.DEV.queue_depth`.
//!
//! DEV is a whole disk (`sdi`, `vda`), a dm or md device (`dm-0`), or a dm map's name
//! (`mpatha`). A dm/md device's knob writes the device's own file where it has one and every
//! disk under it (`slaves/`, a partition standing for its disk), so one tweak moves a multipath
//! map and all its paths together — and a path that refuses rolls back the others.
//!
//! Bounds, and why: `read_ahead_kb` 0 – 64 MiB (tuned's throughput profiles use 4 MiB; more is
//! page cache thrown away on random reads; the kernel keeps it in pages, so a value that is not
//! a whole number of pages reads back different and is rolled back); `nr_requests` 4 – 2048
//! (the kernel's minimum and the most a scheduler takes), and without a scheduler at most the
//! hardware tags (`mq/0/nr_tags`: the kernel refuses more with EINVAL); `queue_depth` 1 – the SCSI host's `can_queue` (the kernel refuses more),
//! or only down from the smallest current depth when `can_queue` cannot be read.

use super::knob::{gate, Allowed, Knob, Target};
use super::range::Unit;
use super::{read_value, Ctx};
use crate::root::Root;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// The knob named `name` when it is a storage knob (`disk.DEV.X`, `scsi.DEV.queue_depth`).
pub fn find(ctx: &Ctx, name: &str) -> Option<Result<Knob, String>> {
    let (family, rest) = name.split_once('.')?;
    if family != "disk" && family != "scsi" {
        return None;
    }
    let (dev, what) = rest.rsplit_once('.')?;
    match (family, what) {
        ("disk", "scheduler" | "read_ahead_kb" | "nr_requests") | ("scsi", "queue_depth") => {}
        _ => {
            return Some(Err(format!(
                "unknown knob {name:?} (storage knobs: disk.DEV.scheduler, \
                 disk.DEV.read_ahead_kb, disk.DEV.nr_requests, scsi.DEV.queue_depth)"
            )))
        }
    };
    let Some(dev) = resolve(&ctx.root, dev) else {
        return Some(Err(format!(
            "{name}: no disk {dev:?} in sys/block (nor a dm map of that name)"
        )));
    };
    // Named as typed (`disk.mpatha.read_ahead_kb`), once the device is known to exist: the
    // names are as many as the disks' and dm maps' (see `intern`).
    Some(Ok(build(ctx, intern(name), &dev)))
}

/// A knob's name for the lifetime of the process. `Knob::name` is `&'static str` (the fixed
/// registry's names); a per-disk name is kept once per distinct name, so what this holds is
/// bounded by the host's disks and dm maps times four knobs.
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(n);
    n
}

/// `sys/block` name of DEV: itself, or the dm device whose `dm/name` it is.
fn resolve(root: &Root, dev: &str) -> Option<String> {
    if dev.is_empty() || dev.contains('/') || dev.starts_with('.') {
        return None;
    }
    if root.is_dir(&format!("sys/block/{dev}")) {
        return Some(dev.to_string());
    }
    root.list_dir("sys/block")
        .into_iter()
        .filter(|d| d.starts_with("dm-"))
        .find(|d| root.read_line(&format!("sys/block/{d}/dm/name")).as_deref() == Some(dev))
}

/// The whole disk a slave entry stands for (a partition stands for its disk).
fn whole_disk(root: &Root, name: &str) -> Option<String> {
    if root.is_dir(&format!("sys/block/{name}")) {
        return Some(name.to_string());
    }
    root.list_dir("sys/block")
        .into_iter()
        .find(|d| root.is_dir(&format!("sys/block/{d}/{name}")))
}

/// DEV, then the disks under it, each once.
fn devices(root: &Root, dev: &str) -> Vec<String> {
    let mut out = vec![dev.to_string()];
    let mut slaves = root.list_dir(&format!("sys/block/{dev}/slaves"));
    slaves.sort();
    for s in slaves {
        if let Some(d) = whole_disk(root, &s) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// Without a scheduler a queue takes no more requests than its hardware tags (`mq/0/nr_tags`;
/// the kernel refuses more with EINVAL).
fn tag_limit(root: &Root, dev: &str) -> Option<u64> {
    let sched = read_value(root, &format!("sys/block/{dev}/queue/scheduler"))?;
    (sched == "none")
        .then(|| root.read_u64(&format!("sys/block/{dev}/mq/0/nr_tags")))
        .flatten()
}

/// The SCSI host's `can_queue` for disk `dev` (`device` links to `.../H:C:T:L`).
fn can_queue(root: &Root, dev: &str) -> Option<u64> {
    let hctl = root.link_name(&format!("sys/block/{dev}/device"))?;
    let host = hctl.split(':').next()?;
    root.read_u64(&format!("sys/class/scsi_host/host{host}/can_queue"))
}

fn build(ctx: &Ctx, knob: &'static str, dev: &str) -> Knob {
    let root = &ctx.root;
    let file = knob.rsplit('.').next().unwrap_or_default();
    let under = |d: &str| match file {
        "queue_depth" => format!("sys/block/{d}/device/queue_depth"),
        f => format!("sys/block/{d}/queue/{f}"),
    };
    // The device's own file where it has one (a dm map has no SCSI depth), and its disks'
    // (for the SCSI depth, those that are SCSI; a queue file missing under a disk disables
    // the knob with its path).
    let targets: Vec<Target> = devices(root, dev)
        .into_iter()
        .filter(|d| (d != dev && file != "queue_depth") || root.exists(&under(d)))
        .map(|d| Target {
            rel: under(&d),
            label: d,
        })
        .collect();
    let current: Vec<Option<String>> = targets.iter().map(|t| read_value(root, &t.rel)).collect();
    let (description, allowed) = match file {
        "scheduler" => {
            let lists = targets
                .iter()
                .map(|t| super::knob::words(root, &t.rel))
                .collect::<Vec<_>>();
            let first = lists.first().cloned().unwrap_or_default();
            let common = first
                .into_iter()
                .filter(|w| lists.iter().all(|l| l.contains(w)))
                .collect();
            (
                "I/O scheduler of the disk (and of every disk under a dm/md device)",
                Allowed::Choices(common),
            )
        }
        "read_ahead_kb" => (
            "read-ahead of the disk (and of every disk under a dm/md device), in KiB",
            Allowed::Range {
                min: 0,
                max: 64 * 1024,
                unit: Unit::KiB,
            },
        ),
        "nr_requests" => (
            "requests the block layer queues per hardware queue (and under a dm/md device)",
            Allowed::Range {
                min: 4,
                max: targets
                    .iter()
                    .filter_map(|t| tag_limit(root, &t.label))
                    .fold(2048, u64::min),
                unit: Unit::Plain,
            },
        ),
        _ => {
            // Up to the smallest host limit; unknown for any target: only down.
            let limits: Option<Vec<u64>> =
                targets.iter().map(|t| can_queue(root, &t.label)).collect();
            let max = match limits {
                Some(l) if !l.is_empty() => l.into_iter().min().unwrap_or(1),
                _ => current
                    .iter()
                    .filter_map(|c| c.as_deref()?.parse::<u64>().ok())
                    .min()
                    .unwrap_or(1),
            };
            (
                "SCSI queue depth: commands the device holds at once (and every SCSI path of a map)",
                Allowed::Range {
                    min: 1,
                    max: max.max(1),
                    unit: Unit::Plain,
                },
            )
        }
    };
    let mut k = Knob {
        name: knob,
        description,
        disabled: None,
        allowed,
        targets,
        current,
        side: Vec::new(),
        unit_bytes: None,
        warning: None,
    };
    if k.targets.is_empty() {
        k.disabled = Some(match file {
            "queue_depth" => {
                format!("{dev} is not a SCSI disk and has none under it (no device/queue_depth)")
            }
            _ => format!("{dev} has no queue/{file}"),
        });
    }
    gate(ctx, &mut k);
    k
}

/// Storage knobs of every whole disk that has the file, for `tweak list` and the knob menu;
/// a disk of size 0 (a loop device with nothing attached) has nothing to tune.
pub fn all(ctx: &Ctx) -> Vec<Knob> {
    let root = &ctx.root;
    let mut disks = root.list_dir("sys/block");
    disks.sort();
    let mut out = Vec::new();
    for d in disks {
        if root.read_u64(&format!("sys/block/{d}/size")) == Some(0) {
            continue;
        }
        let mut names: Vec<String> = ["scheduler", "read_ahead_kb", "nr_requests"]
            .iter()
            .filter(|w| root.exists(&format!("sys/block/{d}/queue/{w}")))
            .map(|w| format!("disk.{d}.{w}"))
            .collect();
        if root.exists(&format!("sys/block/{d}/device/queue_depth")) {
            names.push(format!("scsi.{d}.queue_depth"));
        }
        out.extend(names.iter().filter_map(|n| find(ctx, n)?.ok()));
    }
    out
}
