//! The kernel log (`/dev/kmsg`): read without blocking every sample, from the end of the log
//! at the first sample on (old boot messages are never new events), into the events perftop
//! names (`parse`). The descriptor stays open between samples: `/dev/kmsg` keeps each
//! reader's position, so a sample reads exactly what arrived since the last one.
//!
//! A fixture root may hold `dev/kmsg` as a plain file of records, one a line: it is read the
//! same way (from its end at the first sample, then what was appended), so tests need no root.

mod parse;

pub use parse::{killed_process, oom_summary, record, MAX_MESSAGE};

use crate::root::Root;
use crate::sample::{KernelEvent, KernelEvents, OomVictim};
use rustix::fs::{FileType, Mode, OFlags, SeekFrom};
use rustix::io::Errno;
use std::os::fd::OwnedFd;

/// At most this many records a sample: a flood (a driver printing in a loop) cannot hold the
/// sample up; the rest is read by the next sample, and the sample says it was cut.
pub const MAX_RECORDS: usize = 1000;
/// At most this many bytes a sample, for the same reason.
pub const MAX_BYTES: usize = 1 << 20;
/// One read's buffer: a `/dev/kmsg` read returns one whole record or EINVAL when the buffer
/// is smaller (records are at most 8 KiB with their dictionary, `CONSOLE_EXT_LOG_MAX`).
const READ_BUF: usize = 16 * 1024;

/// What the kernel log reader keeps between samples.
#[derive(Debug, Default)]
pub struct Kmsg {
    fd: Option<OwnedFd>,
    /// Why it could not be opened (kept so the reason stays the same every sample).
    failed: Option<String>,
    /// The last record's sequence number: a jump after EPIPE is how many were lost.
    last_seq: Option<u64>,
    /// A plain file's unfinished last line, completed by the next read.
    partial: Vec<u8>,
    /// An `oom-kill:` summary whose `Killed process` line has not arrived yet, and whether
    /// a whole read has passed since (then it is reported as it is).
    pending: Option<(OomVictim, f64, bool)>,
}

impl Kmsg {
    /// Reads what arrived since the last sample. `None`: a fixture root without `dev/kmsg`
    /// (nothing to read, as any absent optional file).
    pub fn read(&mut self, root: &Root) -> Option<KernelEvents> {
        if self.fd.is_none() {
            if self.failed.is_some() {
                return Some(unknown(self.failed.clone()));
            }
            match open(root) {
                Ok(Some(fd)) => self.fd = Some(fd),
                Ok(None) => return None,
                Err(why) => {
                    self.failed = Some(why.clone());
                    return Some(unknown(Some(why)));
                }
            }
            // Opened now: what is in the log already is history. The next sample reads
            // what arrives after this point.
            return Some(KernelEvents::default());
        }
        let mut out = KernelEvents::default();
        let fd = self.fd.take()?;
        let mut buf = vec![0u8; READ_BUF];
        let (mut records, mut bytes) = (0usize, 0usize);
        let mut lost_epipe = false;
        'read: loop {
            // The complete lines already read first (a plain file's read returns many; the
            // ones past the bound wait here for the next sample).
            while let Some(i) = self.partial.iter().position(|&b| b == b'\n') {
                if records >= MAX_RECORDS || bytes >= MAX_BYTES {
                    out.cut = true;
                    break 'read;
                }
                let line: Vec<u8> = self.partial.drain(..=i).collect();
                bytes += line.len();
                // Continuation lines (dictionary `KEY=value`) start with a space.
                if line.len() > 1 && line[0] != b' ' {
                    records += 1;
                    self.take(&line, &mut out, &mut lost_epipe);
                }
            }
            if self.partial.len() >= READ_BUF {
                // A line longer than a buffer (a plain file): taken as it is, cut.
                let line = std::mem::take(&mut self.partial);
                bytes += line.len();
                records += 1;
                self.take(&line, &mut out, &mut lost_epipe);
            }
            match rustix::io::read(&fd, &mut buf[..]) {
                Ok(0) => break,
                // `/dev/kmsg` returns one record ending in a newline; a plain file's last
                // line may be unfinished until the next append.
                Ok(n) => self.partial.extend_from_slice(&buf[..n]),
                Err(Errno::AGAIN) => break,
                Err(Errno::INTR) => continue,
                // The kernel overwrote records this reader had not read: the next read
                // returns the oldest left; the sequence numbers say how many were lost.
                Err(Errno::PIPE) => {
                    lost_epipe = true;
                    out.lost = out.lost.max(1);
                }
                Err(e) => {
                    let why = format!("/dev/kmsg: {e}");
                    self.failed = Some(why.clone());
                    out.unknown = Some(why);
                    return Some(out);
                }
            }
        }
        self.fd = Some(fd);
        // A summary whose `Killed process` line did not come within a whole read is
        // reported without the sizes.
        if let Some((v, time, waited)) = self.pending.take() {
            if waited {
                push_victim(&mut out, v, time);
            } else {
                self.pending = Some((v, time, true));
            }
        }
        Some(out)
    }

    /// One record line.
    fn take(&mut self, line: &[u8], out: &mut KernelEvents, lost_epipe: &mut bool) {
        let Some(r) = parse::record(line) else {
            return;
        };
        if let Some(last) = self.last_seq {
            if *lost_epipe && r.seq > last + 1 {
                // The 1 counted at EPIPE was a marker; the gap is the count.
                out.lost = out.lost.saturating_sub(1) + (r.seq - last - 1);
            }
        }
        *lost_epipe = false;
        self.last_seq = Some(r.seq);
        if r.facility != 0 {
            return;
        }
        let time = r.time_us as f64 / 1e6;
        if let Some(v) = parse::oom_summary(&r.message) {
            if let Some((p, t, _)) = self.pending.replace((v, time, false)) {
                push_victim(out, p, t);
            }
            return;
        }
        if let Some(k) = parse::killed_process(&r.message) {
            let v = match self.pending.take() {
                Some((mut s, _, _)) if s.pid == k.pid => {
                    s.anon_rss_kb = k.anon_rss_kb;
                    s.file_rss_kb = k.file_rss_kb;
                    s.shmem_rss_kb = k.shmem_rss_kb;
                    s
                }
                other => {
                    if let Some((p, t, _)) = other {
                        push_victim(out, p, t);
                    }
                    k
                }
            };
            out.events.push(KernelEvent {
                kind: "oom_kill".to_string(),
                time,
                message: r.message,
                pid: Some(v.pid),
                comm: Some(v.comm.clone()),
                device: None,
            });
            out.oom_victims.push(OomVictim { time, ..v });
            return;
        }
        if let Some(e) = parse::event(&r.message, time) {
            out.events.push(e);
        }
    }
}

/// A victim known from its summary line only.
fn push_victim(out: &mut KernelEvents, v: OomVictim, time: f64) {
    out.events.push(KernelEvent {
        kind: "oom_kill".to_string(),
        time,
        message: format!("oom-kill: task={},pid={}", v.comm, v.pid),
        pid: Some(v.pid),
        comm: Some(v.comm.clone()),
        device: None,
    });
    out.oom_victims.push(OomVictim { time, ..v });
}

fn unknown(why: Option<String>) -> KernelEvents {
    KernelEvents {
        unknown: why,
        ..KernelEvents::default()
    }
}

/// Opens the root's `dev/kmsg` without following a link and without blocking, at its end.
/// `Ok(None)`: a fixture root has none. The live one must be the character device.
fn open(root: &Root) -> Result<Option<OwnedFd>, String> {
    let path = root.path("dev/kmsg");
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = match rustix::fs::open(&path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) if !root.is_live() => return Ok(None),
        Err(e @ (Errno::PERM | Errno::ACCESS)) => {
            return Err(format!(
                "/dev/kmsg: {e}: the kernel log needs root (or CAP_SYSLOG with kernel.dmesg_restrict=1)"
            ))
        }
        Err(e) => return Err(format!("/dev/kmsg: {e}")),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| format!("/dev/kmsg: fstat: {e}"))?;
    let kind = FileType::from_raw_mode(st.st_mode);
    let fine = match root.is_live() {
        true => kind == FileType::CharacterDevice,
        false => matches!(kind, FileType::CharacterDevice | FileType::RegularFile),
    };
    if !fine {
        return Err(format!("/dev/kmsg: not the kernel log device ({kind:?})"));
    }
    rustix::fs::seek(&fd, SeekFrom::End(0)).map_err(|e| format!("/dev/kmsg: seek: {e}"))?;
    Ok(Some(fd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn append(path: &std::path::Path, text: &str) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .expect("open");
        f.write_all(text.as_bytes()).expect("write");
    }

    /// A fixture root's `dev/kmsg`: what is there at the first sample is history; what is
    /// appended after is read once, with the sample it arrived in; the two OOM lines make
    /// one victim; user-space records (facility 1) are not the kernel's.
    #[test]
    fn reads_from_the_end_and_joins_the_oom_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("dev")).expect("mkdir");
        let log = dir.path().join("dev/kmsg");
        append(
            &log,
            "3,1,100,-;I/O error, dev vda, sector 8 op 0x0:(READ)\n",
        );
        let root = Root::new(dir.path());
        let mut k = Kmsg::default();
        assert_eq!(
            k.read(&root),
            Some(KernelEvents::default()),
            "history is not new"
        );
        append(
            &log,
            "6,2,5000000,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,\
             mems_allowed=0,oom_memcg=/g,task_memcg=/g,task=hog,pid=77,uid=0\n \
             SUBSYSTEM=x\n3,3,5000100,-;Memory cgroup out of memory: Killed process 77 (hog) \
             total-vm:10kB, anon-rss:9kB, file-rss:1kB, shmem-rss:0kB, UID:0\n\
             14,4,5000200,-;INFO: task fake:1 blocked for more than 1 seconds.\n",
        );
        let e = k.read(&root).expect("events");
        assert_eq!(e.oom_victims.len(), 1, "{e:?}");
        let v = &e.oom_victims[0];
        assert_eq!(
            (v.pid, v.comm.as_str(), v.cgroup.as_deref()),
            (77, "hog", Some("/g"))
        );
        assert_eq!((v.anon_rss_kb, v.file_rss_kb), (Some(9), Some(1)));
        assert_eq!(v.constraint.as_deref(), Some("CONSTRAINT_MEMCG"));
        assert!((v.time - 5.0001).abs() < 1e-9);
        assert_eq!(e.events.len(), 1, "the user-space line is no event: {e:?}");
        assert_eq!(k.read(&root), Some(KernelEvents::default()), "read once");
        // A line cut mid-way is completed by the next read.
        append(&log, "3,5,6000000,-;I/O error, dev sd");
        assert_eq!(k.read(&root).map(|e| e.events.len()), Some(0));
        append(&log, "b, sector 1\n");
        let e = k.read(&root).expect("events");
        assert_eq!(e.events[0].device.as_deref(), Some("sdb"));
    }

    /// A flood is read at most `MAX_RECORDS` a sample, says it was cut, and the rest comes
    /// with the next sample.
    #[test]
    fn a_flood_is_bounded_and_carried_on() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("dev")).expect("mkdir");
        let log = dir.path().join("dev/kmsg");
        append(&log, "");
        let root = Root::new(dir.path());
        let mut k = Kmsg::default();
        k.read(&root);
        let mut text = String::new();
        for i in 0..(MAX_RECORDS + 500) {
            text.push_str(&format!("3,{i},{i},-;I/O error, dev vda, sector {i}\n"));
        }
        append(&log, &text);
        let a = k.read(&root).expect("events");
        let b = k.read(&root).expect("events");
        assert!(a.cut && !b.cut);
        assert_eq!(a.events.len() + b.events.len(), MAX_RECORDS + 500);
        assert_eq!(a.events.len(), MAX_RECORDS);
    }

    /// After EPIPE the gap in the sequence numbers is how many records were lost; a gap
    /// without EPIPE (a fixture's own numbering) is not counted.
    #[test]
    fn lost_records_are_counted_from_the_sequence_numbers() {
        let mut k = Kmsg::default();
        let mut out = KernelEvents::default();
        let mut epipe = false;
        k.take(b"6,10,1,-;first", &mut out, &mut epipe);
        epipe = true;
        out.lost = 1;
        k.take(b"6,25,2,-;after the overrun", &mut out, &mut epipe);
        assert_eq!(out.lost, 14, "records 11..=24");
        assert!(!epipe);
        k.take(b"6,40,3,-;a gap without EPIPE", &mut out, &mut epipe);
        assert_eq!(out.lost, 14);
    }

    /// The live root's `/dev/kmsg`: as root it opens, and the first sample reports nothing
    /// from the boot log; without root (or with dmesg_restrict) it is unknown with a reason.
    #[test]
    fn the_live_log_starts_at_its_end() {
        let mut k = Kmsg::default();
        let first = k.read(&Root::new("/")).expect("live root always answers");
        match &first.unknown {
            Some(why) => assert!(why.starts_with("/dev/kmsg"), "{why}"),
            None => {
                assert!(first.events.is_empty(), "boot messages replayed: {first:?}");
                assert!(k.read(&Root::new("/")).is_some());
            }
        }
    }
}
