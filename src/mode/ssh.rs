//! `perftop ssh HOST...`: the dashboard of other hosts, drawn here from the samples their own
//! perftop streams over the system `ssh` (`remote`). One host: its full dashboard, fed by the
//! link instead of the local sampler. Several: the fleet screen.
//!
//! Tweaks go to the host itself: the dashboard's tweak keys run that host's perftop
//! (`perftop tweak` there, as root or with `sudo -n`, over an ssh of their own:
//! `remote::tweak`), so its preview, journal, read-back and undo are the host's own.

use crate::record::stream::Got;
use crate::remote::install::{self, Copy};
use crate::remote::link::{self, LinkEvent, Wanted};
use crate::remote::{sh_quote, Target};
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub struct SshOptions {
    pub hosts: Vec<String>,
    pub remote_root: Option<String>,
    /// `--remote-state-dir`: the remote's tweak journal directory (default: its /run/perftop).
    pub remote_state_dir: Option<String>,
    pub interval: Duration,
    pub look: crate::ui::Look,
    pub record_dir: PathBuf,
}

/// The command the remote runs: its copy of perftop, streaming.
pub fn stream_command(interval: Duration, remote_root: Option<&str>) -> String {
    let mut cmd = format!(
        "exec {} stream -d {}",
        install::remote_exe(),
        interval.as_secs_f64()
    );
    if let Some(r) = remote_root {
        cmd.push_str(&format!(" --root {}", sh_quote(r)));
    }
    install::sh_c(&cmd)
}

/// Copies perftop to `t` when needed, saying so on stderr (before the screen is taken).
pub fn prepare(t: &Target) -> Result<install::Probe> {
    let (probe, copy) = install::ensure(t)?;
    if let Copy::Copied { bytes } = copy {
        eprintln!(
            "perftop: copied perftop ({}) to {}:~/{}/{}",
            crate::units::kb(Some(bytes / 1024)),
            t.label(),
            crate::remote::CACHE_DIR,
            crate::remote::remote_name()
        );
    }
    Ok(probe)
}

/// The header's words for a lost link.
pub fn lost_text(at_ms: i64, why: &str, retry: Duration) -> String {
    format!(
        "link lost at {}, reconnecting (in {} s): {}",
        crate::record::format_clock(at_ms),
        retry.as_secs(),
        crate::safe::line(why)
    )
}

pub fn run(opts: SshOptions) -> Result<crate::ui::Ended> {
    let targets = opts
        .hosts
        .iter()
        .map(|h| Target::parse(h))
        .collect::<Result<Vec<_>>>()?;
    if targets.len() > 1 {
        return fleet(opts, targets);
    }
    let t = targets.into_iter().next().context("no host given")?;
    let probe = prepare(&t)?;
    let cmd = stream_command(opts.interval, opts.remote_root.as_deref());
    let started = opts.interval;
    let label = format!("{} ({})", t.label(), crate::safe::line(&probe.name));
    let remote = tweaks_at(&opts, &t);
    crate::ui::run_fed(ui_options(opts), label, remote, move |feed, ctl| {
        spawn_link(t, cmd, started, wanted(ctl)?, feed, false)
    })
}

/// Where the tweak keys of `t`'s dashboard go: its perftop, under the same root it samples.
fn tweaks_at(opts: &SshOptions, t: &Target) -> crate::remote::tweak::Remote {
    crate::remote::tweak::Remote {
        target: t.clone(),
        root: opts.remote_root.clone(),
        state_dir: opts.remote_state_dir.clone(),
    }
}

/// `+`/`-` on a host's dashboard: each new interval sent on `ctl` is kept where its link reads
/// it and tells the remote sampler.
fn wanted(ctl: std::sync::mpsc::Receiver<Duration>) -> Result<Wanted> {
    let want: Wanted = Arc::new(AtomicU64::new(0));
    let set = Arc::clone(&want);
    std::thread::Builder::new()
        .name("interval".into())
        .spawn(move || {
            for d in ctl {
                set.store(d.as_millis() as u64, Ordering::Relaxed);
            }
        })
        .context("starting the interval thread")?;
    Ok(want)
}

/// The dashboard's options for remote samples: nothing local is read, nothing tweaked here.
fn ui_options(opts: SshOptions) -> crate::ui::Options {
    crate::ui::Options {
        root: crate::root::Root::new("/"),
        interval: opts.interval,
        keep: Duration::from_secs(600),
        look: opts.look,
        read_only: true,
        state_dir: None,
        record_dir: opts.record_dir,
    }
}

/// The thread of one host's link, feeding `feed`. `install`: the copy is made (or checked) on
/// this thread first, retried with the link's backoff while it fails (the fleet screen: one
/// host that cannot be reached must not hold up the others' start).
fn spawn_link(
    t: Target,
    cmd: String,
    started: Duration,
    want: Wanted,
    feed: crate::ui::Feed,
    install: bool,
) -> Result<()> {
    std::thread::Builder::new()
        .name(format!("link {}", t.label()))
        .spawn(move || {
            if install && !ensure_retrying(&t, &feed) {
                return;
            }
            let link_feed = feed.clone();
            link::run(
                &t,
                &cmd,
                started,
                &want,
                |g| match g {
                    Got::Sample(s) => feed.sample(s),
                    Got::Header(_) => true,
                },
                |ev| match ev {
                    LinkEvent::Up => link_feed.link(None),
                    LinkEvent::Lost { at_ms, why, retry } => {
                        link_feed.link(Some(lost_text(at_ms, &why, retry)))
                    }
                },
            )
        })
        .context("starting the link thread")?;
    Ok(())
}

/// Makes the remote copy, retrying with backoff and saying why on the host's row while it
/// fails. False once the dashboard is gone.
fn ensure_retrying(t: &Target, feed: &crate::ui::Feed) -> bool {
    let mut retry = Duration::from_secs(1);
    loop {
        match install::ensure(t) {
            Ok(_) => return true,
            Err(e) => {
                let at = crate::record::writer::wall_ms();
                if !feed.link(Some(lost_text(at, &format!("{e:#}"), retry))) {
                    return false;
                }
                std::thread::sleep(retry);
                retry = (retry * 2).min(Duration::from_secs(30));
            }
        }
    }
}

/// `perftop ssh H1 H2 ...`: every host prepared and linked on its own thread, in parallel.
fn fleet(opts: SshOptions, targets: Vec<Target>) -> Result<crate::ui::Ended> {
    let cmd = stream_command(opts.interval, opts.remote_root.as_deref());
    let started = opts.interval;
    let labels: Vec<String> = targets.iter().map(Target::label).collect();
    let remotes = targets.iter().map(|t| tweaks_at(&opts, t)).collect();
    crate::ui::run_fleet(ui_options(opts), labels, remotes, move |feeds| {
        for (t, (feed, ctl)) in targets.into_iter().zip(feeds) {
            spawn_link(t, cmd.clone(), started, wanted(ctl)?, feed, true)?;
        }
        Ok(())
    })
}
