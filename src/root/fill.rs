//! Reading one open file whole into a reused buffer: a fresh descriptor (checked for a special
//! file) or one kept open between samples (read again from offset 0 with `pread`), and which
//! kernel files give all they have in one read.

use super::{ReadError, FIRST_READ};
use std::fs;
use std::io::Read;

/// `pread` returns this for a file that cannot be read at an offset (a pipe, some special
/// procfs files): such a file is never kept.
pub(super) const ESPIPE: i32 = 29;

/// `read` returns this for a directory.
pub(super) const EISDIR: i32 = 21;

/// Where `fill` reads from.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Fresh {
    /// Just opened by path: read from where it stands, and checked for a special file.
    Opened,
    /// Kept open since an earlier read (see `kept`): read again from offset 0 with `pread`.
    Kept,
}

/// Why `fill` stopped short of a whole file.
pub(super) enum Stop {
    Io(std::io::Error),
    Not(ReadError),
}

/// Asked after each read with the bytes read so far: true stops the read there.
pub(super) type Until<'a> = Option<&'a dyn Fn(&[u8]) -> bool>;

/// Every read after the first asks for at least this much (a page, as a `seq_file` table hands
/// out): a read asked for a few bytes returns a few bytes of a record, so its length would say
/// nothing of where the table ends, and a multi-page table would cost more reads.
const MIN_ASK: usize = 4096;

/// A `seq_file` table fills at least this much a read (its buffer: one page, more only for a
/// record longer than a page).
const SEQ_PAGE: usize = 4096;

/// How the reads of a kernel file end (`reads_end`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Ends {
    /// Produced whole: a first read shorter than asked is all of it.
    Whole,
    /// A `seq_file` table whose records are at most this many bytes. A read stops at the end of
    /// the table, when it has what was asked, or when the next record does not fit the page:
    /// a read shorter than asked that left room in the page for a whole record more was the
    /// end (`seq_read_iter`), and the read that would only return 0 is saved.
    Rows(usize),
    /// Anything else: read until a read returns 0.
    AtZero,
}

impl Ends {
    /// True when a read of `n` bytes, asked for `asked` after `len` bytes in all, ends the file.
    fn ended(self, len: usize, n: usize, asked: usize) -> bool {
        match self {
            Ends::Whole => len < FIRST_READ,
            Ends::Rows(row) => n < asked && n + row <= SEQ_PAGE,
            Ends::AtZero => false,
        }
    }
}

/// Reads `file` whole into `data` (at most `cap` bytes) and says how many bytes it read.
/// `ends`: how a short read says the file ended (`reads_end`), so no read is spent only to see
/// the end. `until`: the caller has what it needs sooner.
pub(super) fn fill(
    file: &fs::File,
    data: &mut Vec<u8>,
    cap: usize,
    from: Fresh,
    ends: Ends,
    until: Until,
) -> Result<usize, Stop> {
    use std::os::unix::fs::FileExt;
    let short_is_whole = ends == Ends::Whole;
    let mut len = 0;
    // `fstat` only where a special file could be: a first read that came back empty,
    // failed, filled the whole first buffer or will be followed by another. A short first
    // read of a file whose reads are whole is a sysfs or procfs attribute (or a small
    // regular file); `O_NONBLOCK` already keeps a FIFO, a socket or a terminal from
    // blocking, and the 100k small files of a big host skip one syscall. A kept descriptor
    // passed that check when it was opened.
    let mut checked = from == Fresh::Kept;
    loop {
        if len >= cap {
            break;
        }
        if data.len() - len < MIN_ASK && data.len() < cap {
            data.resize((len * 2).max(len + MIN_ASK).min(cap), 0);
        }
        // The first read asks for FIRST_READ bytes only, whatever the buffer's size: a
        // sysctl read allocates (and zeroes) a kernel buffer as large as the request.
        let want = if len == 0 { FIRST_READ } else { data.len() };
        let asked = want - len;
        let got = match from {
            Fresh::Opened => (&*file).read(&mut data[len..want]),
            Fresh::Kept => file.read_at(&mut data[len..want], len as u64),
        };
        let short_end = short_is_whole && matches!(got, Ok(n) if n > 0 && len + n < FIRST_READ);
        if !checked && !short_end {
            checked = true;
            match file.metadata() {
                Ok(m) if m.is_file() => {}
                Ok(m) if m.is_dir() => return Err(Stop::Not(ReadError::NotAFile)),
                Ok(_) => return Err(Stop::Not(ReadError::Special)),
                Err(e) => return Err(Stop::Io(e)),
            }
        }
        match got {
            Ok(0) => break,
            Ok(n) => {
                len += n;
                // A short first read of a file that is produced whole is all of it: that
                // saves the read() that would only return EOF, a third of the syscalls on a
                // big host's 100k small files. A table of bounded records ends at a read that
                // left a record's room; any other file is read until a read returns 0.
                if ends.ended(len, n, asked) || until.is_some_and(|u| u(&data[..len])) {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Stop::Io(e)),
        }
    }
    Ok(len)
}

/// How the reads of the kernel file `dir/name` (relative to the root, `name` possibly empty)
/// end: `Whole` where `short_read_is_whole`, `Rows` for the tables of bounded records read
/// every sample (`/proc/diskstats`: 3 numbers and a name of at most 31 bytes, then 17 numbers
/// of at most 20 digits, under 450 bytes; `/proc/net/dev`: a name of at most 15 and 16
/// numbers, under 360; `/proc/net/softnet_stat`: 13 words of 9, 117; `/proc/vmstat`: a name
/// and a number, under 80; `/proc/net/tcp` and `tcp6`: one socket a row, 150 and ~180),
/// `AtZero` for the rest.
pub(super) fn reads_end(dir: &str, name: &str) -> Ends {
    if short_read_is_whole(dir, name) {
        return Ends::Whole;
    }
    let d = dir.trim_matches('/');
    let is = |path: &str| match name {
        "" => d == path,
        _ => path.strip_prefix(d).and_then(|r| r.strip_prefix('/')) == Some(name),
    };
    match [
        "proc/diskstats",
        "proc/net/dev",
        "proc/net/softnet_stat",
        "proc/vmstat",
        "proc/net/tcp",
        "proc/net/tcp6",
    ]
    .into_iter()
    .any(is)
    {
        true => Ends::Rows(ROW_MAX_BYTES),
        false => Ends::AtZero,
    }
}

/// The longest record `reads_end` allows for its `Rows` tables, with room to spare.
const ROW_MAX_BYTES: usize = 512;

/// True when a read of the kernel file `dir/name` (relative to the root, `name` possibly
/// empty) shorter than asked means the end of the file.
///
/// Not true of every kernel file. A procfs table that lists records one by one (`seq_file`
/// with an iterator: `/proc/interrupts`, `vmstat`, `diskstats`, `net/dev`,
/// `net/softnet_stat`, `net/tcp`, `zoneinfo`, `self/mountinfo`, `cpuinfo`) fills one page
/// (4 KiB) a read and stops at the first record that does not fit, so a short read is only
/// the first page: read that way, a 16-CPU host's `/proc/interrupts` lost every per-type row
/// after its 4,055th byte (`LOC`, `CAL`, `TLB`, ...), and a host with more disks, NICs,
/// CPUs, sockets or mounts would lose the ones past the first page. What is produced in one
/// go: sysfs and cgroupfs attributes (one `show` into one page; not the iterated
/// `cgroup.procs`, `cgroup.threads` and `tasks`), sysctls, `/proc/irq/N/*`, the single-record
/// procfs files below, and regular files (a fixture's), whose reads are short only at the end.
pub(super) fn short_read_is_whole(dir: &str, name: &str) -> bool {
    let mut parts = dir.split('/').chain(Some(name)).filter(|p| !p.is_empty());
    let last = dir
        .split('/')
        .chain(Some(name))
        .rfind(|p| !p.is_empty())
        .unwrap_or("");
    match (parts.next(), parts.next()) {
        (Some("sys"), _) => !matches!(last, "cgroup.procs" | "cgroup.threads" | "tasks"),
        (Some("proc"), Some("sys" | "irq" | "pressure")) => true,
        (Some("proc"), Some(second)) => {
            let rest = parts.count();
            if second == "self"
                || second == "thread-self"
                || second.bytes().all(|b| b.is_ascii_digit())
            {
                // `/proc/PID/...` and `/proc/PID/task/TID/...`: the one-record files.
                matches!(
                    last,
                    "stat"
                        | "statm"
                        | "status"
                        | "io"
                        | "comm"
                        | "cgroup"
                        | "schedstat"
                        | "cmdline"
                ) && rest >= 1
            } else if rest == 0 {
                matches!(
                    second,
                    "stat" | "meminfo" | "loadavg" | "uptime" | "softirqs" | "cmdline" | "version"
                )
            } else {
                second == "net"
                    && rest == 1
                    && matches!(
                        last,
                        "snmp" | "snmp6" | "netstat" | "sockstat" | "sockstat6"
                    )
            }
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::{reads_end, short_read_is_whole, Ends, ROW_MAX_BYTES};
    use crate::root::{ReadBuf, Root};

    #[test]
    fn a_table_of_bounded_records_ends_at_a_read_that_left_a_records_room() {
        for (dir, name) in [
            ("proc/diskstats", ""),
            ("proc", "diskstats"),
            ("/proc/net", "dev"),
            ("proc/net/softnet_stat", ""),
            ("proc", "vmstat"),
            ("proc/net", "tcp"),
            ("proc/net/tcp6", ""),
        ] {
            assert_eq!(
                reads_end(dir, name),
                Ends::Rows(ROW_MAX_BYTES),
                "{dir} {name}"
            );
        }
        assert_eq!(reads_end("proc/net", "udp"), Ends::AtZero);
        assert_eq!(reads_end("proc", "interrupts"), Ends::AtZero);
        assert_eq!(reads_end("proc/netx", "dev"), Ends::AtZero);
        assert_eq!(reads_end("proc", "meminfo"), Ends::Whole);
        let rows = Ends::Rows(512);
        // diskstats on the 2-vCPU VM: 737 bytes of 8,192 asked.
        assert!(rows.ended(737, 737, 8192));
        // vmstat there: 4,015 bytes, a page less 81: the next row may not have fit.
        assert!(!rows.ended(4015, 4015, 8192));
        assert!(rows.ended(4096 + 3584, 3584, 4096 * 3));
        assert!(!rows.ended(4096 + 3585, 3585, 4096 * 3));
        // Everything asked for came: more may follow (a read asked for 92 bytes that returned
        // 92 holds part of a row). Short of a small ask, the kernel had no more rows.
        assert!(!rows.ended(100, 100, 100));
        assert!(!rows.ended(92, 92, 92));
        assert!(rows.ended(92, 92, 1000));
        assert!(!Ends::AtZero.ended(1, 1, 8192));
    }

    #[test]
    fn which_kernel_files_are_read_whole_in_one_read() {
        for (dir, name) in [
            ("sys/devices/system/cpu/cpu0/cpuidle/state1", "usage"),
            ("sys/fs/cgroup/system.slice", "memory.stat"),
            ("proc/sys/vm/dirty_bytes", ""),
            ("proc/irq/24", "smp_affinity_list"),
            ("proc/pressure", "io"),
            ("proc/stat", ""),
            ("proc", "meminfo"),
            ("proc/softirqs", ""),
            ("proc/net", "netstat"),
            ("proc/net/snmp", ""),
            ("proc/4242", "stat"),
            ("proc/4242/task/4243", "stat"),
            ("proc/self", "cgroup"),
            ("etc/tuned/active_profile", ""),
        ] {
            assert!(short_read_is_whole(dir, name), "{dir} {name}");
        }
        for (dir, name) in [
            ("proc/interrupts", ""),
            ("proc", "vmstat"),
            ("proc/diskstats", ""),
            ("proc/net", "dev"),
            ("proc/net/softnet_stat", ""),
            ("proc/net/tcp6", ""),
            ("proc/zoneinfo", ""),
            ("proc/cpuinfo", ""),
            ("proc/self/mountinfo", ""),
            ("proc/4242", "mountinfo"),
            ("sys/fs/cgroup/system.slice", "cgroup.procs"),
            ("sys/fs/cgroup/cpu/user", "tasks"),
        ] {
            assert!(!short_read_is_whole(dir, name), "{dir} {name}");
        }
    }

    /// `/proc/net/tcp` lists sockets one record at a time and hands out a page a read: with
    /// 64 listeners (~150 bytes a row) it is over 9 KiB, and every one of them must be read.
    /// (Reading a short first read as the end kept the first 4 KiB: ~26 rows.) It is read by
    /// the `Rows` rule, so this is that rule on a real multi-page table: a looser bound (a read
    /// leaving less than a row's room taken for the end) stops after the first ~4,050 bytes.
    #[test]
    fn a_procfs_table_longer_than_a_page_is_read_to_its_end() {
        let listeners: Vec<std::net::TcpListener> = (0..64)
            .filter_map(|_| std::net::TcpListener::bind("127.0.0.1:0").ok())
            .collect();
        assert_eq!(listeners.len(), 64, "64 loopback listeners");
        let root = Root::new("/");
        let mut buf = ReadBuf::default();
        // Twice: a fresh descriptor, then the one kept open between reads.
        for pass in 0..2 {
            root.read_into("proc/net/tcp", "", &mut buf)
                .expect("read /proc/net/tcp");
            let text = buf.text();
            assert!(text.len() > 8192, "pass {pass}: {} bytes", text.len());
            for l in &listeners {
                let port = l.local_addr().expect("local address").port();
                let local = format!("0100007F:{port:04X} ");
                assert!(
                    text.lines().any(|row| row.contains(&local)),
                    "pass {pass}: port {port} missing from {} bytes read",
                    text.len()
                );
            }
        }
    }
}
