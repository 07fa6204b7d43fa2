//! The first frame on a big synthetic host, end to end (issue 42): a table on screen soon after
//! start (bounded generously: CI is shared and slow), headlines first (a frame of the first look,
//! its per-CPU detail said to be coming), then every CPU's detail as it arrives; no screen on
//! the way claims that the detail is absent.

use crate::support;

use std::time::{Duration, Instant};
use support::synth::{write_host, SynthSpec};
use support::tmux::{tmux_available, Session, POLL};

/// Far above the ~0.5 s a first frame takes at 512 CPUs on an idle 2-vCPU VM.
const FIRST_FRAME_WITHIN: Duration = Duration::from_secs(20);
/// The complete first sample after it (every CPU's detail, ~31,500 files), also generous.
const DETAIL_WITHIN: Duration = Duration::from_secs(60);

#[test]
fn a_big_hosts_first_frame_shows_a_table_then_the_detail() {
    if !tmux_available() {
        support::skip(
            "a_big_hosts_first_frame_shows_a_table_then_the_detail",
            "tmux is not installed (apt-get install -y tmux)",
        );
        return;
    }
    let spec = SynthSpec {
        cpus: 512,
        nodes: 8,
        disks: 128,
        queues: 64,
    };
    let s = Session::start_with("big", |tmp| {
        let root = tmp.join("h512");
        write_host(&root, &spec, 1).expect("writing the 512-CPU host");
        vec!["--root".into(), root.to_string_lossy().into_owned()]
    });
    let start = Instant::now();
    let mut first = None;
    let mut screens = Vec::new();
    let mut headlines_first = false;
    let detail = loop {
        let sc = s.screen();
        if first.is_none() && sc.contains("CPU      C0%") {
            first = Some((start.elapsed(), sc.clone()));
        }
        // The complete sample: C-state columns in the CPU table.
        if sc
            .lines()
            .any(|l| l.starts_with("CPU ") && l.contains(" C6"))
        {
            break sc;
        }
        // Headlines first: a frame of the first look, its detail said to be coming.
        if sc.contains("CPU      C0%") && sc.contains("freq - (reading)") {
            headlines_first = true;
        }
        if screens.last() != Some(&sc) {
            screens.push(sc.clone());
        }
        match &first {
            None => assert!(
                start.elapsed() < FIRST_FRAME_WITHIN,
                "no table after {FIRST_FRAME_WITHIN:?}:\n{sc}"
            ),
            Some(_) => assert!(
                start.elapsed() < DETAIL_WITHIN,
                "no C-state columns after {DETAIL_WITHIN:?}:\n{sc}"
            ),
        }
        std::thread::sleep(POLL);
    };
    let (after, table) = first.expect("a table came first");
    eprintln!("first table after {after:?}:\n{table}\nthen:\n{detail}");
    assert!(
        headlines_first,
        "no frame of the first look (a table, freq still being read) before the detail; \
         the first table:\n{table}"
    );
    for sc in &screens {
        assert!(
            !sc.contains("not exposed"),
            "a screen said detail is absent:\n{sc}"
        );
    }
    s.keys(&["q"]);
    s.assert_exited_and_restored("q", &["0"]);
}
