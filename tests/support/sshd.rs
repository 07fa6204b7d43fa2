//! A private OpenSSH server for the `perftop ssh` tests: its own host key, a user key for root,
//! an authorized_keys and a known_hosts made here, on 127.0.0.1:2222 (another free port when
//! 2222 is taken, e.g. by a test running beside it), a private HOME for the sessions it starts
//! (`SetEnv HOME=`, so `~/.cache/perftop` is the test's), and an ssh_config for the client,
//! given to perftop as `PERFTOP_SSH="ssh -F FILE"`. Stopped (and its sessions with it) on drop.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Sshd {
    pub port: u16,
    /// The remote user's HOME.
    pub home: PathBuf,
    pub ssh_config: PathBuf,
    child: Child,
    pub dir: tempfile::TempDir,
}

fn tool(path: &str) -> bool {
    Path::new(path).is_file()
}

fn port() -> u16 {
    // One test of this process takes 2222; tests running beside it take a free port (two that
    // both found 2222 free at once would both bind it, and one sshd would fail).
    static TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !TAKEN.swap(true, std::sync::atomic::Ordering::SeqCst)
        && TcpListener::bind("127.0.0.1:2222").is_ok()
    {
        return 2222;
    }
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Sshd {
    /// Starts the server; Err says why it cannot run here (for `support::skip`).
    pub fn start() -> Result<Sshd, String> {
        if !super::is_root() {
            return Err("needs root (sshd logs in as root)".into());
        }
        for t in [
            "/usr/sbin/sshd",
            "/usr/bin/ssh",
            "/usr/bin/ssh-keygen",
            "/usr/bin/sha256sum",
        ] {
            if !tool(t) {
                return Err(format!("{t} missing (apt-get install openssh-server)"));
            }
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        let home = d.join("home");
        std::fs::create_dir(&home).expect("home");
        for key in ["host_key", "id"] {
            let ok = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", ""])
                .arg("-f")
                .arg(d.join(key))
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "ssh-keygen {key}");
        }
        let read = |f: &str| std::fs::read_to_string(d.join(f)).expect("key");
        std::fs::write(d.join("authorized_keys"), read("id.pub")).expect("authorized_keys");
        let port = port();
        let host_pub = read("host_key.pub");
        std::fs::write(
            d.join("known_hosts"),
            format!("[127.0.0.1]:{port} {host_pub}[localhost]:{port} {host_pub}"),
        )
        .expect("known_hosts");
        let p = |f: &str| d.join(f).display().to_string();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nPidFile {}\n\
                 AuthorizedKeysFile {}\nStrictModes no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 PermitRootLogin prohibit-password\nUsePAM no\nSetEnv HOME={}\n",
                p("host_key"),
                p("sshd.pid"),
                p("authorized_keys"),
                home.display()
            ),
        )
        .expect("sshd_config");
        let ssh_config = d.join("ssh_config");
        std::fs::write(
            &ssh_config,
            format!(
                "Host *\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  \
                 StrictHostKeyChecking yes\n  LogLevel ERROR\n",
                p("id"),
                p("known_hosts")
            ),
        )
        .expect("ssh_config");
        // sshd's privilege separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(d.join("sshd.log")).expect("sshd.log"),
            ))
            .spawn()
            .map_err(|e| format!("starting sshd: {e}"))?;
        let s = Sshd {
            port,
            home,
            ssh_config,
            child,
            dir,
        };
        // Ready once a login runs a command.
        let start = Instant::now();
        loop {
            let out = s.ssh(&["true"]);
            if out.status.success() {
                return Ok(s);
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "sshd never accepted a login: {}; log: {}",
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_to_string(s.dir.path().join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `PERFTOP_SSH` for perftop.
    pub fn perftop_ssh(&self) -> String {
        format!("ssh -F {}", self.ssh_config.display())
    }

    /// `root@127.0.0.1:PORT`.
    pub fn target(&self) -> String {
        format!("root@127.0.0.1:{}", self.port)
    }

    /// Runs a command on the server as root.
    pub fn ssh(&self, cmd: &[&str]) -> std::process::Output {
        Command::new("ssh")
            .arg("-F")
            .arg(&self.ssh_config)
            .args([
                "-o",
                "BatchMode=yes",
                "-p",
                &self.port.to_string(),
                "root@127.0.0.1",
            ])
            .args(cmd)
            .stdin(Stdio::null())
            .output()
            .expect("running ssh")
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The pids whose command line starts with `exe` (the remote copy of perftop), from /proc.
pub fn pids_of(exe: &Path) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    let want = exe.as_os_str().as_encoded_bytes();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if cmd.split(|&b| b == 0).next() == Some(want) {
            let ppid = std::fs::read_to_string(e.path().join("stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(") ")
                        .and_then(|(_, r)| r.split_whitespace().nth(1).map(str::to_string))
                })
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            out.push((pid, ppid));
        }
    }
    out
}
