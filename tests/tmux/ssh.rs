//! `perftop ssh` end to end: a private sshd (`support::sshd`), perftop in tmux as a person runs
//! it, a synthetic incident host as the remote's `--remote-root`.

use crate::support;
use crate::support::sshd::{pids_of, Sshd};
use crate::support::tmux::Session;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a remote state may take: the first connection copies a debug build (~100 MB).
const WAIT: Duration = Duration::from_secs(40);

/// A synthetic host under incident, rewritten every second (its counters move, so rates and
/// findings exist): memory PSI "full" 40% of each interval, past the 10% that raises
/// `memory stalls` as critical.
pub(crate) struct Incident {
    pub(crate) root: PathBuf,
    stop: Arc<AtomicBool>,
    _tmp: tempfile::TempDir,
}

impl Incident {
    pub(crate) fn start() -> Incident {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().join("host");
        let stop = Arc::new(AtomicBool::new(false));
        let write = |root: &Path, tick: u64| {
            support::synth::write_host(root, &support::small_host(), tick).expect("synth host");
            let dir = root.join("proc/pressure");
            std::fs::create_dir_all(&dir).expect("pressure dir");
            let us = tick * 1_000_000;
            for (r, some, full) in [("cpu", 5, 0), ("memory", 60, 40), ("io", 5, 1)] {
                std::fs::write(
                    dir.join(r),
                    format!(
                        "some avg10=0.00 avg60=0.00 avg300=0.00 total={}\n\
                         full avg10=0.00 avg60=0.00 avg300=0.00 total={}\n",
                        us * some / 100,
                        us * full / 100
                    ),
                )
                .expect("pressure file");
            }
        };
        write(&root, 0);
        let (r, s) = (root.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut tick = 1;
            while !s.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_secs(1));
                write(&r, tick);
                tick += 1;
            }
        });
        Incident {
            root,
            stop,
            _tmp: tmp,
        }
    }
}

impl Drop for Incident {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn wait(s: &Session, what: &str, pred: impl Fn(&str) -> bool) -> String {
    wait_within(s, what, WAIT, pred)
}

/// The screen once `pred` holds, polled every 100 ms for up to `within`, with its arrows as
/// ASCII (`->`: tmux here may run in the C locale, where perftop draws ASCII).
pub(crate) fn wait_within(
    s: &Session,
    what: &str,
    within: Duration,
    pred: impl Fn(&str) -> bool,
) -> String {
    let start = Instant::now();
    loop {
        let screen = s.screen().replace('→', "->");
        if pred(&screen) {
            return screen;
        }
        assert!(
            start.elapsed() < within,
            "timed out after {within:?} waiting for {what}; screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn sha256(p: &Path) -> String {
    let o = std::process::Command::new("sha256sum")
        .arg(p)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

fn remote_exe(sshd: &Sshd) -> PathBuf {
    sshd.home
        .join(".cache/perftop")
        .join(format!("perftop-{}", env!("CARGO_PKG_VERSION")))
}

fn start(sshd: &Sshd, tag: &str, hosts: &[String], root: &Path, extra: &[String]) -> Session {
    let perftop_ssh = sshd.perftop_ssh();
    let env = [
        ("TERM", "xterm-256color"),
        ("PERFTOP_SSH", perftop_ssh.as_str()),
    ];
    let mut args = vec!["ssh".to_string()];
    args.extend(hosts.iter().cloned());
    args.extend(["--remote-root".into(), root.display().to_string()]);
    args.extend(extra.iter().cloned());
    let (s, _bytes) = Session::start_captured(tag, &env, |_| args);
    s.resize(160, 40);
    s
}

/// The private sshd, or a visible skip of test `name` saying why there is none (no tmux, not
/// root, no openssh-server).
fn ready(name: &str) -> Option<Sshd> {
    if !support::tmux::tmux_available() {
        support::skip(name, "tmux not installed");
        return None;
    }
    Sshd::start().map_err(|why| support::skip(name, &why)).ok()
}

/// The recording `R` wrote into `dir`, once it is there.
fn wait_for_file(dir: &Path) -> PathBuf {
    let start = Instant::now();
    loop {
        let found = std::fs::read_dir(dir)
            .ok()
            .and_then(|d| d.flatten().map(|e| e.path()).find(|p| p.is_file()));
        if let Some(p) = found {
            return p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no recording in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `-` on the dashboard in view (from 1 s), then 4 s recorded with `R` into `dir`: the
/// recording holds samples a median 0.5 s apart by the remote's clock.
fn half_second_steps(s: &Session, dir: &Path) {
    s.keys(&["-"]);
    wait(s, "the new interval", |sc| sc.contains("0.50s"));
    std::thread::sleep(Duration::from_millis(1500));
    s.keys(&["R"]);
    std::thread::sleep(Duration::from_millis(4000));
    s.keys(&["R"]);
    let rec = wait_for_file(dir);
    let r = perftop::record::Recording::open(&rec).expect("the recording");
    let walls: Vec<i64> = r.samples.iter().map(|x| x.wall_ms).collect();
    let mut steps: Vec<i64> = walls.windows(2).map(|w| w[1] - w[0]).collect();
    steps.sort_unstable();
    let median = steps.get(steps.len() / 2).copied().unwrap_or(0);
    assert!(
        steps.len() >= 4 && (400..=650).contains(&median),
        "samples {walls:?}: median step {median} ms, not 500"
    );
}

/// Waits until no remote perftop runs (the remote sampler ends with its channel).
fn no_remote_perftop(exe: &Path) {
    let start = Instant::now();
    while !pids_of(exe).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "remote perftop still running after q: {:?}",
            pids_of(exe)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// To a remote without perftop: copies itself to ~/.cache/perftop/perftop-VERSION (the same
/// bytes), shows the remote host's name, its finding, `g` points at the remote's menu; the
/// sampler's sshd session killed: "link lost", then samples again from a new remote sampler;
/// `q` leaves no perftop on the remote.
#[test]
fn ssh_copies_itself_shows_the_remote_and_reconnects() {
    let name = "ssh_copies_itself_shows_the_remote_and_reconnects";
    let Some(sshd) = ready(name) else {
        return;
    };
    let exe = remote_exe(&sshd);
    assert!(!exe.exists(), "a fresh HOME has no perftop");
    let inc = Incident::start();
    let recs = tempfile::tempdir().expect("tempdir");
    let s = start(
        &sshd,
        "ssh1",
        &[sshd.target()],
        &inc.root,
        &["--record-dir".into(), recs.path().display().to_string()],
    );
    let screen = wait(&s, "the remote's dashboard", |sc| {
        sc.contains("synth-2c") && sc.contains(&format!("ssh {}", sshd.target()))
    });
    assert!(exe.is_file(), "not copied to {}:\n{screen}", exe.display());
    assert_eq!(
        sha256(&exe),
        sha256(Path::new(env!("CARGO_BIN_EXE_perftop"))),
        "the remote copy differs from this perftop"
    );
    wait(&s, "the remote's memory stall finding", |sc| {
        sc.contains("memory stalls")
    });
    s.keys(&["g"]);
    wait(&s, "g pointing at the remote's knob menu", |sc| {
        sc.contains(&format!("on {}, a lists its knobs", sshd.target()))
    });

    // `-` halves the interval on the remote too: the samples recorded after it (`R`, here)
    // come 0.5 s apart by the remote's own clock.
    half_second_steps(&s, recs.path());

    let first = pids_of(&exe);
    assert_eq!(first.len(), 1, "one remote sampler: {first:?}");
    let (pid, sshd_child) = first[0];
    assert!(sshd_child > 1, "the sampler's parent: {first:?}");
    let _ = std::process::Command::new("kill")
        .arg(sshd_child.to_string())
        .status();
    wait(&s, "link lost", |sc| sc.contains("link lost at"));
    wait(&s, "the link back", |sc| {
        !sc.contains("link lost at") && sc.contains("synth-2c")
    });
    let again = pids_of(&exe);
    assert!(
        again.len() == 1 && again[0].0 != pid,
        "a new remote sampler after the reconnect: {again:?} (was {pid})"
    );
    // The old sampler exits at its stdin's end of file; its new parent reaps it a moment
    // later (a zombie has exited: it counts as gone).
    let gone = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |st| {
            st.rsplit_once(") ")
                .is_some_and(|(_, r)| r.starts_with('Z'))
        })
    };
    let until = Instant::now() + Duration::from_secs(10);
    while !gone() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        gone(),
        "old sampler {pid} left running 10 s after the reconnect"
    );

    s.keys(&["q"]);
    wait(&s, "perftop gone", |sc| {
        sc.lines().any(|l| l.trim() == "DONE")
    });
    no_remote_perftop(&exe);
}

/// Two hosts: a row for each, with the finding in words; Enter opens one's dashboard, where
/// `-` halves that host's remote interval (its recording's samples come 0.5 s apart); Esc
/// comes back; `q` leaves no perftop on the remote.
#[test]
fn ssh_fleet_shows_a_row_per_host() {
    let name = "ssh_fleet_shows_a_row_per_host";
    let Some(sshd) = ready(name) else {
        return;
    };
    let inc = Incident::start();
    let hosts = [sshd.target(), format!("localhost:{}", sshd.port)];
    let recs = tempfile::tempdir().expect("tempdir");
    let s = start(
        &sshd,
        "ssh2",
        &hosts,
        &inc.root,
        &["--record-dir".into(), recs.path().display().to_string()],
    );
    let screen = wait(&s, "two rows up with their finding", |sc| {
        sc.contains("perftop fleet  2 hosts")
            && hosts.iter().all(|h| {
                sc.lines().any(|l| {
                    l.starts_with(h.as_str()) && l.contains(" up ") && l.contains("memory stalls")
                })
            })
    });
    assert!(screen.contains("CRIT memory stalls"), "{screen}");
    s.keys(&["Enter"]);
    wait(&s, "a host's dashboard", |sc| {
        sc.contains("Esc: the fleet") && sc.contains("synth-2c")
    });
    half_second_steps(&s, recs.path());
    s.keys(&["Escape"]);
    wait(&s, "the fleet again", |sc| {
        sc.contains("perftop fleet  2 hosts")
    });
    s.keys(&["q"]);
    wait(&s, "perftop gone", |sc| {
        sc.lines().any(|l| l.trim() == "DONE")
    });
    no_remote_perftop(&remote_exe(&sshd));
}

/// utime + stime of `pid` (all its threads), in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let f: Vec<u64> = s
                .rsplit_once(") ")?
                .1
                .split_whitespace()
                .skip(11)
                .take(2)
                .filter_map(|x| x.parse().ok())
                .collect();
            (f.len() == 2).then(|| f[0] + f[1])
        })
        .unwrap_or(0)
}

/// The children of `pid` (its `ssh` clients), by their parent in `/proc/N/stat`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    let ppid = s.rsplit_once(") ")?.1.split_whitespace().nth(1)?;
                    ppid.parse::<u32>().ok()
                })
                == Some(pid)
        })
        .collect()
}

/// Issue 44's cost figure, measured by hand (docs/fleet.md "Cost"): 16 hosts on the fleet
/// screen at `-d 1` for 60 s; the local perftop's CPU (all its threads) as a share of one core,
/// and its 16 `ssh` clients' beside it. The 16 hosts are this machine through the private sshd
/// (their samplers' cost lands on this machine too, not on the local dashboard). Asserts the
/// issue's 2% only where the machine was quiet enough to judge (a load average under 4).
/// `cargo test --release --test tmux fleet_of_16_hosts_cost -- --ignored --nocapture`
#[test]
#[ignore = "a 60 s measurement, run by hand"]
fn fleet_of_16_hosts_cost() {
    let name = "fleet_of_16_hosts_cost";
    let Some(sshd) = ready(name) else {
        return;
    };
    // The remote copy in place already: 16 first connections need not copy 16 times.
    let exe = remote_exe(&sshd);
    std::fs::create_dir_all(exe.parent().expect("cache dir")).expect("cache dir");
    std::fs::copy(env!("CARGO_BIN_EXE_perftop"), &exe).expect("seed the remote copy");
    let inc = Incident::start();
    let hosts: Vec<String> = (0..16).map(|_| sshd.target()).collect();
    let s = start(&sshd, "ssh16", &hosts, &inc.root, &[]);
    let screen = wait(&s, "16 rows up", |sc| {
        sc.contains("perftop fleet  16 hosts")
            && sc
                .lines()
                .filter(|l| l.starts_with(hosts[0].as_str()) && l.contains(" up "))
                .count()
                == 16
    });
    let pid: u32 = s.perftop_pid().parse().expect("pid");
    let hz = 100.0; // USER_HZ: /proc's clock ticks.
    let clients = children(pid);
    let sum = |ps: &[u32]| ps.iter().map(|p| cpu_ticks(*p)).sum::<u64>();
    let load = |()| std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let (t0, p0, c0, l0) = (Instant::now(), cpu_ticks(pid), sum(&clients), load(()));
    std::thread::sleep(Duration::from_secs(60));
    let (secs, p1, c1, l1) = (
        t0.elapsed().as_secs_f64(),
        cpu_ticks(pid),
        sum(&clients),
        load(()),
    );
    let pct = |d: u64| d as f64 / hz / secs * 100.0;
    let (local, ssh) = (pct(p1 - p0), pct(c1 - c0));
    println!(
        "fleet of 16 hosts, {secs:.1} s: perftop {local:.2}% of a core, its {} ssh clients {ssh:.2}%; load {} -> {}",
        clients.len(),
        l0.trim(),
        l1.trim()
    );
    s.keys(&["q"]);
    let quiet = l1
        .split_whitespace()
        .next()
        .and_then(|x| x.parse::<f64>().ok())
        .is_some_and(|l| l < 4.0);
    if quiet {
        assert!(local <= 2.0, "perftop {local:.2}% of a core:\n{screen}");
    } else {
        support::skip(
            name,
            &format!("too busy to judge the 2% (load {})", l1.trim()),
        );
    }
}
