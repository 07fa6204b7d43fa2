//! Parsers of the per-process files: `/proc/PID/stat` (comm is what lies between the first
//! `(` and the last `)`), `io` and `cgroup`. Each returns `None` for a garbled file.

use crate::source::parse::dec;

/// PF_KTHREAD in `stat`'s flags: the task is a kernel thread.
pub const PF_KTHREAD: u64 = 0x0020_0000;

/// The fields of `/proc/PID/stat` perftop uses.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stat {
    /// Shared: an idle process not read this pass is carried over with its last `Stat`, and
    /// cloning a thousand names a pass showed in the profile.
    pub comm: std::sync::Arc<str>,
    pub state: char,
    pub ppid: u32,
    pub flags: u64,
    /// Minor faults: a process writing a mapped file faults as it dirties pages, with
    /// hardly any CPU time (see `Stat::idle_since`).
    pub minflt: u64,
    pub majflt: u64,
    pub ticks: u64,
    /// cutime + cstime: CPU ticks of its children that exited and were reaped.
    pub child_ticks: u64,
    pub threads: u32,
    pub start: u64,
    pub rss_pages: u64,
    pub cpu: Option<u32>,
    /// Nice value (`None`: garbled).
    pub nice: Option<i8>,
}

impl Stat {
    /// The same process as `before`, and nothing in its `stat` moved: no CPU tick (its own or
    /// its reaped children's), no fault, the same RSS, threads and state. Such a process did
    /// no I/O worth a look either: `write()` and `read()` cost CPU (8 MiB/s of buffered writes
    /// take 2-4 ms of CPU a second here, a tick every few seconds) and writing a mapped file
    /// faults as it dirties pages. A slow writer below a tick per turn is seen when its ticks
    /// move, its rate exact over its own interval.
    pub fn idle_since(&self, before: &Stat) -> bool {
        self.start == before.start
            && self.ticks == before.ticks
            && self.child_ticks == before.child_ticks
            && self.minflt == before.minflt
            && self.majflt == before.majflt
            && self.rss_pages == before.rss_pages
            && self.threads == before.threads
            && self.state == before.state
    }
}

/// Parses a `/proc/PID/stat` line. `comm` is what lies between the first `(` and the last
/// `)`: it may itself hold spaces, parentheses and newlines. `None` when garbled.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?;
    let mut f = text.get(close + 1..)?.split_ascii_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = u32::try_from(dec(f.next()?)?).ok()?;
    // pgrp session tty_nr tpgid: signed, not used.
    let flags = dec(f.nth(4)?)?;
    let minflt = dec(f.next()?)?;
    // cminflt
    let majflt = dec(f.nth(1)?)?;
    // cmajflt
    let utime = dec(f.nth(1)?)?;
    let stime = dec(f.next()?)?;
    // cutime cstime: signed in the kernel's format, never negative in practice; a garbled
    // one only explains nothing (see `child_ticks`).
    let child_ticks = dec(f.next()?)
        .unwrap_or(0)
        .saturating_add(dec(f.next()?).unwrap_or(0));
    // priority (signed, not used), nice (-20..19).
    let nice = f.nth(1)?.parse::<i8>().ok();
    let threads = u32::try_from(dec(f.next()?)?).ok()?;
    // itrealvalue
    let start = dec(f.nth(1)?)?;
    // vsize
    let rss_pages = dec(f.nth(1)?)?;
    // rsslim startcode endcode startstack kstkesp kstkeip signal blocked sigignore sigcatch
    // wchan nswap cnswap exit_signal, then processor (absent on very old kernels).
    let cpu = f.nth(14).and_then(dec).and_then(|c| u32::try_from(c).ok());
    Some(Stat {
        comm: std::sync::Arc::from(comm),
        state,
        ppid,
        flags,
        minflt,
        majflt,
        ticks: utime.saturating_add(stime),
        child_ticks,
        threads,
        start,
        rss_pages,
        cpu,
        nice,
    })
}

/// `read_bytes` and `write_bytes` of a `/proc/PID/io` text.
pub fn parse_io(text: &str) -> Option<(u64, u64)> {
    let (mut read, mut write) = (None, None);
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key {
            "read_bytes" => read = dec(value.trim()),
            "write_bytes" => write = dec(value.trim()),
            _ => {}
        }
    }
    Some((read?, write?))
}

/// A process's cgroups: the one path it is known by (the unified one on v2; on v1 the
/// `name=systemd`, else `memory`, else `cpu` controller's) and, on v1, the memory, cpu and
/// blkio controllers' own paths where they differ from it (a group made in the memory
/// hierarchy alone, as `cgcreate` and docker on v1 make them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CgroupPaths {
    pub main: Option<String>,
    pub memory: Option<String>,
    pub cpu: Option<String>,
    pub blkio: Option<String>,
}

/// The path a process is known by (`CgroupPaths::main`).
pub fn parse_cgroup(text: &str) -> Option<String> {
    parse_cgroups(text).main
}

/// `/proc/PID/cgroup`: `ID:CONTROLLERS:PATH` lines.
pub fn parse_cgroups(text: &str) -> CgroupPaths {
    let mut best: Option<(u8, &str)> = None;
    let (mut memory, mut cpu, mut blkio) = (None, None, None);
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let has = |c: &str| controllers.split(',').any(|x| x == c);
        if has("memory") {
            memory = Some(path);
        }
        if has("cpu") {
            cpu = Some(path);
        }
        if has("blkio") {
            blkio = Some(path);
        }
        let rank = if has("name=systemd") {
            0
        } else if has("memory") {
            1
        } else if has("cpu") {
            2
        } else if controllers.is_empty() {
            3
        } else {
            continue;
        };
        if best.is_none_or(|(r, _)| rank < r) {
            best = Some((rank, path));
        }
    }
    let main = best.map(|(_, p)| p);
    let own = |p: Option<&str>| p.filter(|p| Some(*p) != main).map(str::to_string);
    CgroupPaths {
        memory: own(memory),
        cpu: own(cpu),
        blkio: own(blkio),
        main: main.map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_by_hand() {
        // A real 6.18 line of `cat` with a comm holding spaces and parentheses.
        let line = "4242 (a b) (c)) S 1 4242 4242 0 -1 4194560 120 0 3 0 25 17 300 45 25 5 2 0 \
                    987654 5050368 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 \
                    0 0 0 0 0 0 0 0 0 0 0";
        let s = parse_stat(line).expect("parses");
        assert_eq!(&*s.comm, "a b) (c)");
        assert_eq!(s.state, 'S');
        assert_eq!(s.ppid, 1);
        assert_eq!(s.flags, 4_194_560);
        assert_eq!(s.minflt, 120);
        assert_eq!(s.majflt, 3);
        assert_eq!(s.ticks, 42);
        assert_eq!(s.child_ticks, 345, "cutime + cstime");
        assert_eq!(s.threads, 2);
        assert_eq!(s.start, 987_654);
        assert_eq!(s.rss_pages, 321);
        assert_eq!(s.cpu, Some(1));
        assert_eq!(s.nice, Some(5));
        let kthread = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 2 0 0 \
                       18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 0 0 0 0 0 0 0 0 \
                       0 0 0 0 0";
        let k = parse_stat(kthread).expect("parses");
        assert_eq!(k.nice, Some(0));
        assert_ne!(k.flags & PF_KTHREAD, 0);
        assert_eq!(k.cpu, Some(0));
    }

    #[test]
    fn garbled_stat_is_none() {
        for bad in [
            "",
            "12 (x",
            "12 x) S",
            "12 (x) S 1 2 3",
            "12 (x) S -1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0",
        ] {
            assert_eq!(parse_stat(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn io_and_cgroup_files() {
        let io = "rchar: 100\nwchar: 200\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\n\
                  write_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_io(io), Some((4096, 8192)));
        assert_eq!(parse_io("read_bytes: 1\n"), None);
        let v1 = "12:pids:/user.slice\n4:memory:/user.slice/x\n\
                  1:name=systemd:/user.slice/user-0.slice/session-1.scope\n0::/\n";
        assert_eq!(
            parse_cgroup(v1).as_deref(),
            Some("/user.slice/user-0.slice/session-1.scope")
        );
        assert_eq!(
            parse_cgroup("0::/system.slice/docker-ab.scope\n").as_deref(),
            Some("/system.slice/docker-ab.scope")
        );
        assert_eq!(
            parse_cgroup("3:cpu,cpuacct:/a\n0::/\n").as_deref(),
            Some("/a")
        );
        assert_eq!(parse_cgroup("garbage\n"), None);
        // v1: a group made in the memory hierarchy alone (cgcreate -g memory:/oomtest).
        let v1 = "11:blkio:/system.slice/x.service\n7:cpu,cpuacct:/user.slice\n\
                  4:memory:/oomtest\n1:name=systemd:/user.slice/session-1.scope\n";
        assert_eq!(
            parse_cgroups(v1),
            CgroupPaths {
                main: Some("/user.slice/session-1.scope".into()),
                memory: Some("/oomtest".into()),
                cpu: Some("/user.slice".into()),
                blkio: Some("/system.slice/x.service".into()),
            }
        );
        let v2 = parse_cgroups("0::/a\n");
        assert_eq!((v2.main.as_deref(), v2.memory), (Some("/a"), None));
    }
}
