//! End-to-end, the Processes pane's full list: zoomed, `/` and a unique name find an idle
//! process that the sample's bounded selection leaves out (before the full list: `no row
//! matches filter`), and `H` lists threads by their names (the kernel's `comm` of each task).
//!
//! Needs `tmux` (a visible SKIP without it). Runs on the live host: the processes are real.

use crate::support;

use std::process::{Child, Command};
use support::tmux::{tmux_available, Session};

struct Kid(Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn zoomed_processes_filter_finds_an_idle_process_and_h_lists_threads() {
    let test = "zoomed_processes_filter_finds_an_idle_process_and_h_lists_threads";
    if !tmux_available() {
        support::skip(test, "tmux is not installed (apt-get install -y tmux)");
        return;
    }
    let tag = std::process::id() % 100_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let name = format!("ptsl{tag}");
    let bin = dir.path().join(&name);
    let sleep = ["/bin/sleep", "/usr/bin/sleep"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("a sleep binary");
    std::fs::copy(sleep, &bin).expect("copy sleep");
    let kid = Kid(Command::new(&bin).arg("1000").spawn().expect("sleeper"));
    let pid = kid.0.id().to_string();
    // Threads of this test process, parked until the end, under names of their own.
    let threads = format!("pth{tag}");
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
    let parked: Vec<_> = (0..3)
        .map(|i| {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("{threads}-{i}"))
                .spawn(move || {
                    let _ = rx.lock().map(|r| r.recv());
                })
                .expect("spawn")
        })
        .collect();

    let s = Session::start_with("everyone", |_| vec!["-d".into(), "1".into()]);
    s.resize(160, 40);
    s.wait("the dashboard", |sc| sc.contains("8 Processes"));
    s.keys(&["8", "Enter"]);
    s.wait("the zoomed Processes pane", |sc| sc.contains(" rows "));
    s.keys(&["/"]);
    s.keys(&["-l", &name]);
    s.keys(&["Enter"]);
    let screen = s.wait(&format!("{name} (pid {pid}) in the filtered list"), |sc| {
        sc.lines().any(|l| {
            let mut w = l.split_whitespace();
            w.next() == Some(pid.as_str()) && w.next() == Some(name.as_str())
        })
    });
    assert!(!screen.contains("no row matches"), "{screen}");

    // Threads: hidden until H, then each parked thread by its name.
    // Esc unzooms, the next clears the filter (one at a time: two at once read as Alt-Esc).
    s.keys(&["Escape"]);
    s.wait("unzoomed", |sc| !sc.contains(" rows "));
    s.keys(&["Escape"]);
    s.wait("the filter cleared", |sc| !sc.contains(&format!("/{name}")));
    s.keys(&["8", "Enter", "/"]);
    s.keys(&["-l", &threads]);
    s.keys(&["Enter"]);
    s.wait("no thread rows before H", |sc| {
        sc.contains("no row matches")
    });
    s.keys(&["H"]);
    let screen = s.wait("the parked threads after H", |sc| {
        (0..3).all(|i| sc.contains(&format!("{threads}-{i}")))
    });
    let me = std::process::id();
    for i in 0..3 {
        let n = format!("{threads}-{i}");
        let tid = std::fs::read_dir(format!("/proc/{me}/task"))
            .expect("task dir")
            .filter_map(|e| e.ok())
            .find(|e| {
                std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim_end() == n)
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .expect("the kernel lists the thread");
        assert!(
            screen
                .lines()
                .any(|l| l.split_whitespace().next() == Some(tid.as_str()) && l.contains(&n)),
            "thread {n} (tid {tid}) not on screen:\n{screen}"
        );
    }
    drop(tx);
    for h in parked {
        let _ = h.join();
    }
    drop(kid);
}
