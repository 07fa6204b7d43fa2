//! Parsers of `/dev/kmsg` records and of the kernel lines perftop names: the OOM killer's
//! `oom-kill:` and `Killed process` lines, hung tasks, block I/O errors, soft lockups and
//! NIC link changes. Each returns `None` for a line that is not one (or is garbled).

use crate::sample::{KernelEvent, OomVictim};

/// A record's text is cut to this many bytes (a kernel line is at most ~1 KB; the cut keeps
/// a hostile or garbled record from filling a sample).
pub const MAX_MESSAGE: usize = 512;

/// One `/dev/kmsg` record: `PRI,SEQ,TIMESTAMP_US,FLAGS[,...];MESSAGE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The syslog facility (`PRI >> 3`): 0 is the kernel; what user space writes to
    /// `/dev/kmsg` is never 0 (the kernel makes it LOG_USER), so it cannot pose as the kernel.
    pub facility: u32,
    pub seq: u64,
    /// Microseconds since boot.
    pub time_us: u64,
    pub message: String,
}

/// Parses one record line (without its continuation lines). `None`: not a record.
pub fn record(line: &[u8]) -> Option<Record> {
    let semi = line.iter().position(|&b| b == b';')?;
    let head = std::str::from_utf8(&line[..semi]).ok()?;
    let mut f = head.split(',');
    let pri: u32 = f.next()?.parse().ok()?;
    let seq: u64 = f.next()?.parse().ok()?;
    let time_us: u64 = f.next()?.parse().ok()?;
    let body = &line[semi + 1..];
    let body = body.strip_suffix(b"\n").unwrap_or(body);
    let body = &body[..body.len().min(MAX_MESSAGE)];
    // Non-UTF-8 bytes (the kernel escapes unprintable ones as \xNN, but a cut can split a
    // character) become U+FFFD, never an error.
    let message = String::from_utf8_lossy(body).into_owned();
    Some(Record {
        facility: pri >> 3,
        seq,
        time_us,
        message,
    })
}

/// `oom-kill:constraint=C,nodemask=..,cpuset=..,mems_allowed=..[,oom_memcg=..],task_memcg=M,task=COMM,pid=P,uid=U`
/// (mm/oom_kill.c, `dump_oom_summary`). Read from the right: a comm or a path may hold commas.
pub fn oom_summary(msg: &str) -> Option<OomVictim> {
    let rest = msg.trim_start().strip_prefix("oom-kill:")?;
    let (rest, _uid) = rest.rsplit_once(",uid=")?;
    let (rest, pid) = rest.rsplit_once(",pid=")?;
    let (rest, comm) = rest.rsplit_once(",task=")?;
    let cgroup = rest
        .rsplit_once("task_memcg=")
        .map(|(_, m)| m.to_string())
        .filter(|m| !m.is_empty());
    let constraint = rest
        .strip_prefix("constraint=")
        .and_then(|c| c.split(',').next())
        .map(str::to_string);
    Some(OomVictim {
        pid: pid.trim().parse().ok()?,
        comm: comm.to_string(),
        cgroup,
        constraint,
        ..OomVictim::default()
    })
}

/// `[Memory cgroup ]Out of memory: Killed process P (COMM) total-vm:NkB, anon-rss:NkB,
/// file-rss:NkB, shmem-rss:NkB, UID:U pgtables:NkB oom_score_adj:N` (mm/oom_kill.c,
/// `__oom_kill_process`).
pub fn killed_process(msg: &str) -> Option<OomVictim> {
    let (_, rest) = msg.split_once("Killed process ")?;
    let (pid, rest) = rest.split_once(" (")?;
    let (comm, sizes) = rest.rsplit_once(") total-vm:")?;
    let kb = |key: &str| -> Option<u64> {
        let (_, v) = sizes.split_once(key)?;
        let digits: String = v.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    Some(OomVictim {
        pid: pid.trim().parse().ok()?,
        comm: comm.to_string(),
        anon_rss_kb: kb("anon-rss:"),
        file_rss_kb: kb("file-rss:"),
        shmem_rss_kb: kb("shmem-rss:"),
        ..OomVictim::default()
    })
}

/// The kernel event a record's message is, other than the OOM lines (see `oom_summary`,
/// `killed_process`), or `None`.
pub fn event(msg: &str, time: f64) -> Option<KernelEvent> {
    let ev = |kind: &str| KernelEvent {
        kind: kind.to_string(),
        time,
        message: msg.to_string(),
        ..KernelEvent::default()
    };
    // kernel/hung_task.c: "INFO: task %s:%d blocked for more than %ld seconds."
    if let Some((_, rest)) = msg.split_once("task ") {
        if let Some((who, _)) = rest.split_once(" blocked for more than ") {
            if msg.contains("INFO: task ") {
                let (comm, pid) = who.rsplit_once(':')?;
                return Some(KernelEvent {
                    pid: pid.parse().ok(),
                    comm: Some(comm.to_string()),
                    ..ev("hung_task")
                });
            }
        }
    }
    // kernel/watchdog.c: "BUG: soft lockup - CPU#%d stuck for %us! [%s:%d]"
    if msg.contains("BUG: soft lockup") {
        let who = msg
            .rsplit_once('[')
            .and_then(|(_, w)| w.strip_suffix(']'))
            .and_then(|w| w.rsplit_once(':'));
        return Some(KernelEvent {
            pid: who.and_then(|(_, p)| p.parse().ok()),
            comm: who.map(|(c, _)| c.to_string()),
            ..ev("soft_lockup")
        });
    }
    // block/blk-core.c: "I/O error, dev %s, sector %llu op ..." (and the older
    // "blk_update_request: I/O error, dev ..."); fs/buffer.c: "Buffer I/O error on dev %pg, ..."
    for key in ["I/O error, dev ", "I/O error on dev "] {
        if let Some((_, rest)) = msg.split_once(key) {
            let dev = rest.split([',', ' ']).next().unwrap_or("");
            return Some(KernelEvent {
                device: (!dev.is_empty()).then(|| dev.to_string()),
                ..ev("io_error")
            });
        }
    }
    link(msg).map(|(dev, up)| KernelEvent {
        device: Some(dev),
        ..ev(if up { "link_up" } else { "link_down" })
    })
}

/// A NIC driver's link line: `e1000e 0000:00:19.0 eth0: NIC Link is Down`, `virtio_net
/// virtio0 eth0: Link is Up - 1Gbps/Full`, `mlx5_core 0000:01:00.0 ens1f0: Link down`. The
/// interface is the word before the `: ` that precedes the phrase. (The interface, up?)
fn link(msg: &str) -> Option<(String, bool)> {
    const PHRASES: [(&str, bool); 4] = [
        ("Link is Down", false),
        ("Link is Up", true),
        ("Link down", false),
        ("Link up", true),
    ];
    let (at, up) = PHRASES
        .iter()
        .find_map(|(p, up)| msg.find(p).map(|i| (i, *up)))?;
    let head = msg[..at].strip_suffix("NIC ").unwrap_or(&msg[..at]);
    let head = head.strip_suffix(": ")?;
    let dev = head.rsplit(' ').next()?;
    (!dev.is_empty()).then(|| (dev.to_string(), up))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_their_facility() {
        let r = record(b"6,1234,5678901,-;Out of memory: Killed process 1 (x)\n").expect("record");
        assert_eq!((r.facility, r.seq, r.time_us), (0, 1234, 5_678_901));
        assert_eq!(r.message, "Out of memory: Killed process 1 (x)");
        // Written by user space: facility 1 (LOG_USER), never taken for the kernel's.
        let u = record(b"14,9,10,-;Killed process 1 (x)").expect("record");
        assert_eq!(u.facility, 1);
        // Non-UTF-8 and truncated records: lossy text, or not a record; never a panic.
        let bad = record(b"3,1,2,-;I/O error, dev \xff\xfe, sector 8").expect("record");
        assert!(bad.message.contains('\u{fffd}'));
        for garbled in [&b""[..], b"6,1", b"6,x,1,-;m", b";", b"6,1;m"] {
            assert_eq!(record(garbled), None, "{garbled:?}");
        }
        let long = [b"6,1,2,-;".as_slice(), &[b'a'; 5000]].concat();
        assert_eq!(record(&long).map(|r| r.message.len()), Some(MAX_MESSAGE));
    }

    /// The two lines a 6.1 kernel printed for a kill in a memory-limited v1 cgroup (this
    /// project's VM, stress-ng in /perftop-oom).
    #[test]
    fn oom_lines_of_a_cgroup_kill() {
        let s = oom_summary(
            "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,\
             oom_memcg=/perftop-oom,task_memcg=/perftop-oom,task=stress-ng-vm,pid=4242,uid=0",
        )
        .expect("summary");
        assert_eq!(s.pid, 4242);
        assert_eq!(s.comm, "stress-ng-vm");
        assert_eq!(s.cgroup.as_deref(), Some("/perftop-oom"));
        assert_eq!(s.constraint.as_deref(), Some("CONSTRAINT_MEMCG"));
        let k = killed_process(
            "Memory cgroup out of memory: Killed process 4242 (stress-ng-vm) total-vm:272708kB, \
             anon-rss:262344kB, file-rss:4kB, shmem-rss:0kB, UID:0 pgtables:564kB oom_score_adj:1000",
        )
        .expect("killed");
        assert_eq!((k.pid, k.comm.as_str()), (4242, "stress-ng-vm"));
        assert_eq!(
            (k.anon_rss_kb, k.file_rss_kb, k.shmem_rss_kb),
            (Some(262_344), Some(4), Some(0))
        );
        // A comm with a comma, spaces and a parenthesis.
        let odd = oom_summary(
            "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,\
             global_oom,task_memcg=/a,b,task=x, (y),pid=7,uid=1000",
        )
        .expect("odd");
        assert_eq!(
            (odd.pid, odd.comm.as_str(), odd.cgroup.as_deref()),
            (7, "x, (y)", Some("/a,b"))
        );
        let odd =
            killed_process("Out of memory: Killed process 7 (a) b) total-vm:1kB, anon-rss:2kB")
                .expect("odd");
        assert_eq!((odd.comm.as_str(), odd.anon_rss_kb), ("a) b", Some(2)));
        assert_eq!(
            oom_summary("oom-kill:constraint=X,task=y,pid=z,uid=0"),
            None
        );
        assert_eq!(killed_process("Killed process 12 (x"), None);
    }

    #[test]
    fn other_kernel_events() {
        let h = event("INFO: task dd:1234 blocked for more than 120 seconds.", 1.5).expect("hung");
        assert_eq!(
            (h.kind.as_str(), h.pid, h.comm.as_deref()),
            ("hung_task", Some(1234), Some("dd"))
        );
        let s = event(
            "watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [stress-ng:999]",
            2.0,
        )
        .expect("lockup");
        assert_eq!(
            (s.kind.as_str(), s.pid, s.comm.as_deref()),
            ("soft_lockup", Some(999), Some("stress-ng"))
        );
        let io = event(
            "I/O error, dev vda, sector 2048 op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 2",
            3.0,
        )
        .expect("io");
        assert_eq!(
            (io.kind.as_str(), io.device.as_deref()),
            ("io_error", Some("vda"))
        );
        let b = event(
            "Buffer I/O error on dev loop0, logical block 0, async page read",
            3.0,
        )
        .expect("buffer io");
        assert_eq!(b.device.as_deref(), Some("loop0"));
        for (line, kind, dev) in [
            (
                "e1000e 0000:00:19.0 eth0: NIC Link is Down",
                "link_down",
                "eth0",
            ),
            (
                "virtio_net virtio0 ens3: Link is Up - 1Gbps/Full",
                "link_up",
                "ens3",
            ),
            (
                "mlx5_core 0000:01:00.0 ens1f0: Link down",
                "link_down",
                "ens1f0",
            ),
        ] {
            let e = event(line, 4.0).expect(line);
            assert_eq!(
                (e.kind.as_str(), e.device.as_deref()),
                (kind, Some(dev)),
                "{line}"
            );
        }
        for none in [
            "IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready",
            "EXT4-fs (vda1): mounted filesystem",
            "",
        ] {
            assert_eq!(event(none, 0.0), None, "{none}");
        }
    }
}
