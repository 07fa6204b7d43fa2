//! The tmux harness of the end-to-end tests: the real `perftop` binary in a private tmux
//! server (its own socket in a temp dir, so tests run in parallel and never touch a user's
//! tmux), driven by keys, resizes and signals, read back with `capture-pane`, and, for the byte
//! stream tests, every byte perftop writes copied out with `pipe-pane`.
//!
//! Every wait polls with a deadline; nothing sleeps blindly.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The pane titles as the screen shows them (`1 CPU power`), from the one pane list.
pub fn titles() -> Vec<String> {
    perftop::view::PANES
        .iter()
        .map(|p| format!("{} {}", p.key(), p.title()))
        .collect()
}

/// How long any one state may take to appear (the sampler runs at 1 s).
pub const WAIT: Duration = Duration::from_secs(6);
pub const POLL: Duration = Duration::from_millis(25);

pub fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Single-quotes a string for sh.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A fixture root: one of the hand-made trees when present, else a synthetic host written into
/// `tmp` (a fixture's counters do not change between reads; the dashboard shows `-` rates).
pub fn fixture_root(tmp: &Path) -> PathBuf {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for name in ["intel-pstate", "vm-2cpu", "numa-2node-memless"] {
        let root = fixtures.join(name).join("t1");
        if root.join("proc/stat").is_file() && root.join("proc/meminfo").is_file() {
            return root;
        }
    }
    let root = tmp.join("synth");
    let spec = super::synth::SynthSpec {
        cpus: 8,
        nodes: 2,
        disks: 4,
        queues: 8,
    };
    super::synth::write_host(&root, &spec, 0).expect("writing a synthetic host");
    root
}

/// One private tmux server with one session `t`, running a shell script that starts perftop,
/// then prints `EXITED rc=N`, the tty modes and `DONE` once perftop is gone, and stays (sleeps)
/// so tmux's view of the terminal can be read. (`remain-on-exit` is no good here: tmux 3.3a
/// scrolls the screen to print "Pane is dead" and hides the cursor of a dead pane.)
pub struct Session {
    socket: PathBuf,
    pidfile: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Session {
    pub fn start(tag: &str) -> Session {
        Session::start_with(tag, |tmp| {
            let root = fixture_root(tmp);
            vec![
                "--root".into(),
                root.to_string_lossy().into_owned(),
                "-d".into(),
                "1".into(),
            ]
        })
    }

    /// As `start`, with perftop's arguments made by `args` (given the session's temp dir).
    pub fn start_with(tag: &str, args: impl FnOnce(&Path) -> Vec<String>) -> Session {
        Session::launch(tag, None, None, args)
    }

    /// As `start_with`, perftop started by `command` (given the session's temp dir) instead of
    /// the test binary: a wrapper and a binary, e.g. `setpriv ... /tmp/x/perftop`.
    pub fn start_by(
        tag: &str,
        command: impl FnOnce(&Path) -> Vec<String>,
        args: impl FnOnce(&Path) -> Vec<String>,
    ) -> Session {
        Session::launch(tag, None, Some(Box::new(command)), args)
    }

    /// perftop in the environment `env` (the terminal and locale variables perftop reads —
    /// TERM, COLORTERM, NO_COLOR, LC_ALL, LC_CTYPE, LANG — unset first, then `env` set), with
    /// every byte it writes to the terminal copied into the file returned: perftop starts only
    /// once tmux's `pipe-pane` copies the pane's output, so the first frame is in it too.
    pub fn start_captured(
        tag: &str,
        env: &[(&str, &str)],
        args: impl FnOnce(&Path) -> Vec<String>,
    ) -> (Session, PathBuf) {
        let s = Session::launch(tag, Some(env), None, args);
        let bytes = s._tmp.path().join("bytes");
        let gate = s._tmp.path().join("go");
        s.ok(&[
            "pipe-pane",
            "-O",
            "-t",
            "t",
            &format!("cat > {}", sh_quote(&bytes.to_string_lossy())),
        ]);
        std::fs::write(&gate, "").expect("opening the gate");
        (s, bytes)
    }

    /// The session's temp dir (removed with it).
    pub fn dir(&self) -> &Path {
        self._tmp.path()
    }

    /// `env`: None runs perftop in the test's environment at once; Some waits for the `go`
    /// file (see `start_captured`) and runs it in that environment.
    /// `command`: None runs the test binary.
    #[allow(clippy::type_complexity)]
    fn launch(
        tag: &str,
        env: Option<&[(&str, &str)]>,
        command: Option<Box<dyn FnOnce(&Path) -> Vec<String> + '_>>,
        args: impl FnOnce(&Path) -> Vec<String>,
    ) -> Session {
        let tmp = tempfile::tempdir().expect("temp dir");
        let args: Vec<String> = args(tmp.path()).iter().map(|a| sh_quote(a)).collect();
        let bin = match command {
            Some(c) => c(tmp.path()).iter().map(|a| sh_quote(a)).collect(),
            None => vec![sh_quote(env!("CARGO_BIN_EXE_perftop"))],
        };
        let pidfile = tmp.path().join("perftop.pid");
        let script = tmp.path().join("run.sh");
        let (gate, env) = match env {
            None => (String::new(), String::new()),
            Some(vars) => {
                let go = sh_quote(&tmp.path().join("go").to_string_lossy());
                let set: Vec<String> = vars
                    .iter()
                    .map(|(k, v)| sh_quote(&format!("{k}={v}")))
                    .collect();
                (
                    format!("while [ ! -e {go} ]; do sleep 0.02; done\n"),
                    format!(
                        "env -u TERM -u COLORTERM -u NO_COLOR -u LC_ALL -u LC_CTYPE -u LANG {} ",
                        set.join(" ")
                    ),
                )
            }
        };
        // The inner sh writes its pid, then execs perftop: that pid is perftop's.
        let body = format!(
            "#!/bin/sh\n\
             {gate}\
             {env}sh -c 'echo $$ > \"$0\"; exec \"$@\"' {pid} {bin} {args}\n\
             rc=$?\n\
             echo \"EXITED rc=$rc\"\n\
             echo \"TTY $(stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\\n' ' ')\"\n\
             echo DONE\n\
             exec sleep 60\n",
            pid = sh_quote(&pidfile.to_string_lossy()),
            bin = bin.join(" "),
            args = args.join(" "),
        );
        std::fs::write(&script, body).expect("writing the run script");
        let s = Session {
            socket: tmp.path().join(format!("tmux-{tag}.sock")),
            pidfile,
            _tmp: tmp,
        };
        let cmd = format!("sh {}", sh_quote(&script.to_string_lossy()));
        s.ok(&["new-session", "-d", "-s", "t", "-x", "80", "-y", "24", &cmd]);
        s
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("running tmux")
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.ok(&["capture-pane", "-p", "-t", "t"])
    }

    pub fn format(&self, f: &str) -> String {
        self.ok(&["display-message", "-p", "-t", "t", f])
            .trim()
            .to_string()
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.ok(&args);
    }

    pub fn resize(&self, w: u16, h: u16) {
        self.ok(&[
            "resize-window",
            "-t",
            "t",
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
        ]);
    }

    /// Polls the screen until `pred` holds; panics with the last screen after `WAIT`.
    pub fn wait(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_retrying(what, &[], pred)
    }

    /// As `wait`, sending `keys` again every 1.5 s (for keys whose effect needs a sample first).
    pub fn wait_retrying(&self, what: &str, keys: &[&str], pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        let mut sent = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            if start.elapsed() > WAIT {
                panic!(
                    "timed out after {WAIT:?} waiting for {what}; screen ({}):\n{screen}",
                    self.format("#{window_width}x#{window_height}")
                );
            }
            if !keys.is_empty() && sent.elapsed() > Duration::from_millis(1500) {
                self.keys(keys);
                sent = Instant::now();
            }
            std::thread::sleep(POLL);
        }
    }

    pub fn perftop_pid(&self) -> String {
        let start = Instant::now();
        loop {
            if let Ok(pid) = std::fs::read_to_string(&self.pidfile) {
                let pid = pid.trim().to_string();
                if !pid.is_empty() {
                    return pid;
                }
            }
            assert!(start.elapsed() < WAIT, "perftop never wrote its pid");
            std::thread::sleep(POLL);
        }
    }

    /// Waits for the script's lines after perftop and checks the terminal was handed back.
    pub fn assert_exited_and_restored(&self, how: &str, rcs: &[&str]) -> String {
        let pid = self.perftop_pid();
        let screen = self.wait(
            &format!("the shell's EXITED/DONE lines after {how}"),
            |sc| sc.lines().any(|l| l.trim_end() == "DONE"),
        );
        assert!(
            !Path::new("/proc").join(&pid).exists(),
            "perftop (pid {pid}) still exists after {how}"
        );
        let rc = screen
            .lines()
            .find_map(|l| l.trim().strip_prefix("EXITED rc="))
            .unwrap_or_else(|| panic!("no EXITED line after {how}; screen:\n{screen}"));
        assert!(
            rcs.contains(&rc),
            "exit status {rc} after {how}, expected one of {rcs:?}; screen:\n{screen}"
        );
        assert_eq!(
            self.format("#{alternate_on}"),
            "0",
            "still on the alternate screen after {how}; screen:\n{screen}"
        );
        assert_eq!(
            self.format("#{cursor_flag}"),
            "1",
            "cursor left hidden after {how}"
        );
        let tty = screen
            .lines()
            .find_map(|l| l.trim().strip_prefix("TTY "))
            .unwrap_or_else(|| panic!("no TTY line after {how}; screen:\n{screen}"));
        assert!(
            tty.split_whitespace().any(|m| m == "icanon")
                && tty.split_whitespace().any(|m| m == "echo"),
            "terminal left in raw mode after {how} (stty: {tty}); screen:\n{screen}"
        );
        screen
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

pub fn all_panes(screen: &str) -> bool {
    titles().iter().all(|t| screen.contains(t.as_str()))
}

pub fn has_footer(screen: &str) -> bool {
    // The space and Enter hints follow the state (`space resume` paused, `Enter unzoom`).
    [
        &["q quit"][..],
        &["? help"],
        &["space pause", "space resume"],
        &["Enter zoom", "Enter unzoom"],
    ]
    .iter()
    .all(|any| any.iter().any(|h| screen.contains(h)))
}

/// Dashboard text left on the normal screen after exit.
pub fn leftovers(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .filter(|l| titles().iter().any(|t| l.contains(t.as_str())) || l.contains("q quit"))
        .collect()
}
