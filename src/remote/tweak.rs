//! Tweaks on a remote host: `perftop tweak set|undo` run there by the remote copy, over a
//! one-shot `ssh` of its own (the same ssh command and options as the sample stream), as root
//! (directly, or with `sudo -n`: never a password prompt). The remote's journal, lock and
//! audit log are the record; nothing is applied or journalled here.
//!
//! The remote command is one line that the remote's shell parses (ssh joins its arguments into
//! one string), so every word that comes from a person (knob, value) or a path is single-quoted
//! (`sh_quote`) and the whole script handed to `sh -c` is quoted again.

use super::{sh_quote, ssh_command, Target};
use std::io::Read;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// How long one remote tweak command may take before it is given up (the link is then as good
/// as lost: ssh's own keep-alives give up after 15 s).
pub const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// The exit status the remote script gives when it is not root and has no `sudo`.
const NO_SUDO: i32 = 86;
/// The most of each output kept (a preview is a few lines; this bounds a babbling remote).
const KEEP: u64 = 64 << 10;

/// Where tweaks go on one remote host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    pub target: Target,
    /// `--remote-root`: the remote perftop tweaks under this root, as it samples under it.
    pub root: Option<String>,
    /// `--remote-state-dir`: the remote's journal directory (default: its /run/perftop).
    pub state_dir: Option<String>,
}

/// What the remote said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// perftop ran there and succeeded: its output (preview, read-back, `applied`).
    Done(String),
    /// perftop ran there and refused or failed: its own words (stdout, then stderr).
    Refused(String),
    /// Not root there and `sudo -n` would not run it: why, in words naming the host.
    NoRoot(String),
    /// The link failed or went silent: nothing is known of the remote's side beyond this.
    Lost(String),
}

impl Answer {
    /// Every line of it, for a dialog or the status line.
    pub fn text(&self) -> &str {
        match self {
            Answer::Done(s) | Answer::Refused(s) | Answer::NoRoot(s) | Answer::Lost(s) => s,
        }
    }
}

impl Remote {
    /// The `sh` script that runs `perftop tweak ARGS` on the remote as root: directly when the
    /// remote user is root, else through `sudo -n` (which fails rather than asks). `args`: the
    /// subcommand and its options, then `--` and the words a person typed (knob, value), so
    /// that a value such as `-5` is never read as an option.
    pub fn script(&self, args: &[&str]) -> String {
        let mut cmd = String::from("\"$exe\"");
        if let Some(r) = &self.root {
            cmd.push_str(&format!(" --root {}", sh_quote(r)));
        }
        cmd.push_str(" tweak");
        let ends = args.iter().position(|a| *a == "--").unwrap_or(args.len());
        let word = |cmd: &mut String, a: &str| {
            cmd.push(' ');
            cmd.push_str(&sh_quote(a));
        };
        for a in &args[..ends] {
            word(&mut cmd, a);
        }
        // `tweak list` reads no journal, and clap refuses options it does not take.
        if let Some(d) = self
            .state_dir
            .as_ref()
            .filter(|_| args.first() != Some(&"list"))
        {
            cmd.push_str(&format!(" --state-dir {}", sh_quote(d)));
        }
        for a in &args[ends..] {
            word(&mut cmd, a);
        }
        format!(
            "exe={exe}; if [ \"$(id -u)\" = 0 ]; then exec {cmd} </dev/null; fi; \
             command -v sudo >/dev/null 2>&1 || exit {NO_SUDO}; exec sudo -n {cmd} </dev/null",
            exe = super::install::remote_exe()
        )
    }

    /// Runs `perftop tweak ARGS` on the remote; waits at most `within`.
    pub fn run(&self, args: &[&str], within: Duration) -> Answer {
        let host = self.target.label();
        let child = ssh_command(&self.target, &super::install::sh_c(&self.script(args))).and_then(
            |mut c| {
                c.stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(anyhow::Error::from)
            },
        );
        let child = match child {
            Ok(c) => c,
            Err(e) => return Answer::Lost(format!("{host}: starting ssh: {e:#}")),
        };
        match wait(child, within) {
            None => Answer::Lost(format!(
                "{host}: no answer within {} s, the link is lost; nothing was changed here",
                within.as_secs()
            )),
            Some((code, out, err)) => judge(&host, code, &out, &err),
        }
    }
}

/// Waits for `child` at most `within`, reading its output meanwhile; `None` (and the child
/// killed) when it ran over. The exit code is `None` when a signal ended it.
fn wait(mut child: Child, within: Duration) -> Option<(Option<i32>, String, String)> {
    let reader = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(r) = r {
                let _ = r.take(KEEP).read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if start.elapsed() < within => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) | Err(_) => break None,
        }
    };
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    Some((status.code(), out, err))
}

/// Sorts what the remote said into an `Answer` from its exit code and its words.
pub fn judge(host: &str, code: Option<i32>, out: &str, err: &str) -> Answer {
    let out = crate::safe::text(out.trim_end()).into_owned();
    let err = crate::safe::text(err.trim()).into_owned();
    let last_err = err.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
    match code {
        Some(0) => Answer::Done(out),
        // ssh's own failures (no connection, refused key, link dropped) exit 255.
        Some(255) | None => Answer::Lost(format!(
            "{host}: the link failed ({}); nothing was changed here: `perftop tweak status` on \
             {host} says what its journal holds",
            if last_err.is_empty() {
                "ssh ended without a word"
            } else {
                last_err
            }
        )),
        Some(NO_SUDO) => Answer::NoRoot(format!(
            "{host}: not root there and no sudo; tweaks need root or passwordless sudo"
        )),
        // sudo's own refusal: nothing from perftop, sudo's words on stderr.
        Some(_) if out.is_empty() && err.lines().any(|l| l.starts_with("sudo:")) => {
            Answer::NoRoot(format!(
                "{host}: sudo needs a password; tweaks need root or passwordless sudo \
                 (sudo said: {last_err})"
            ))
        }
        Some(c) => {
            let mut s = out;
            if !err.is_empty() {
                if !s.is_empty() {
                    s.push('\n');
                }
                s.push_str(&err);
            }
            if s.is_empty() {
                s = format!("{host}: perftop tweak exited with {c} and said nothing");
            }
            Answer::Refused(s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `sh` makes of a quoted word: the word, whatever it holds.
    fn through_sh(word: &str) -> String {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {}", sh_quote(word)))
            .output()
            .expect("sh");
        assert!(out.status.success(), "sh failed on {word:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    }

    #[test]
    fn quoted_words_reach_the_remote_shell_whole() {
        for w in [
            "plain",
            "two words",
            "it's",
            "'",
            "''",
            "\"double\"",
            "$(touch /tmp/perftop-quote-test)",
            "`id`",
            "a; rm -rf /",
            "x && y || z",
            "$HOME",
            "back\\slash",
            "new\nline",
            "",
            "-n",
        ] {
            assert_eq!(through_sh(w), w, "{w:?} was changed by the shell");
        }
        assert!(!std::path::Path::new("/tmp/perftop-quote-test").exists());
    }

    /// The whole script survives both quotings (`sh -c '…'` around the quoted words), as ssh
    /// hands it to the remote's shell: the words perftop gets are the words given.
    #[test]
    fn the_script_hands_perftop_the_words_given() {
        let r = Remote {
            target: Target::parse("db1").expect("target"),
            root: Some("/srv/fix ture".into()),
            state_dir: Some("/tmp/st'ate".into()),
        };
        let script = r.script(&["set", "--dry-run", "--", "vm.swappiness", "1; echo $(id)"]);
        // `exe` swapped for a printer of its arguments, one per line.
        let script = script.replacen("exe=", "exe=/usr/bin/printf; : ", 1);
        let printer = script.replace("\"$exe\"", "\"$exe\" '%s\\n'");
        // The root branch whoever runs the test (the sudo branch's words are the same).
        let root_test = "[ \"$(id -u)\" = 0 ]";
        assert!(printer.contains(root_test), "{printer}");
        let printer = printer.replace(root_test, "true");
        let line = super::super::install::sh_c(&printer);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&line)
            .env("PATH", "/usr/bin:/bin")
            .output()
            .expect("sh");
        let text = String::from_utf8_lossy(&out.stdout);
        let words: Vec<&str> = text.lines().collect();
        assert_eq!(
            words,
            [
                "--root",
                "/srv/fix ture",
                "tweak",
                "set",
                "--dry-run",
                "--state-dir",
                "/tmp/st'ate",
                "--",
                "vm.swappiness",
                "1; echo $(id)",
            ],
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A remote that does not answer in time is given up and its ssh ended (no child left
    /// behind); one that answers gives its code and both outputs.
    #[test]
    fn a_silent_remote_is_given_up_in_time() {
        let spawn = |script: &str| {
            std::process::Command::new("sh")
                .args(["-c", script])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("sh")
        };
        let child = spawn("sleep 30");
        let pid = child.id();
        let start = Instant::now();
        assert_eq!(wait(child, Duration::from_millis(300)), None);
        let took = start.elapsed();
        assert!(took < Duration::from_secs(10), "gave up after {took:?}");
        // Killed and reaped: no such process any more.
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        let child = spawn("echo out; echo err >&2; exit 3");
        assert_eq!(
            wait(child, Duration::from_secs(20)),
            Some((Some(3), "out\n".to_string(), "err\n".to_string()))
        );
    }

    #[test]
    fn answers_are_judged_by_code_and_words() {
        assert_eq!(
            judge("h", Some(0), "applied\n", ""),
            Answer::Done("applied".into())
        );
        let a = judge("h", Some(1), "", "sudo: a password is required\n");
        assert_eq!(
            a,
            Answer::NoRoot(
                "h: sudo needs a password; tweaks need root or passwordless sudo \
                 (sudo said: sudo: a password is required)"
                    .into()
            )
        );
        assert!(matches!(
            judge("h", Some(NO_SUDO), "", ""),
            Answer::NoRoot(_)
        ));
        let a = judge(
            "h",
            Some(255),
            "",
            "ssh: connect to host h port 22: Connection refused\n",
        );
        assert!(
            matches!(&a, Answer::Lost(s) if s.contains("Connection refused")),
            "{a:?}"
        );
        assert!(matches!(judge("h", None, "", ""), Answer::Lost(_)));
        let a = judge(
            "h",
            Some(1),
            "vm.swappiness → 300\n",
            "perftop: \"300\" is outside the bounds\n",
        );
        assert_eq!(
            a,
            Answer::Refused("vm.swappiness → 300\nperftop: \"300\" is outside the bounds".into())
        );
    }
}
