//! The sysinfo thread: mounted filesystems' space and the hwmon temperatures, read every
//! `PERIOD` on a thread of their own and handed to the sampler through a slot.
//!
//! Why a thread: `statvfs` on a hard NFS mount or a FUSE daemon that stopped answering never
//! returns, and no sample may wait on it. The thread publishes each finished read with the
//! CLOCK_BOOTTIME it finished at; the sampler copies the latest one into the sample under a lock
//! that is only ever held to swap or clone a list, so a stuck thread leaves the sample with an
//! ever older read (derive says how old), never a stalled sample. Live root only: a `--root`
//! fixture has no mounts of its own to ask.
//!
//! sysinfo lists the mounts (`/proc/mounts` less pseudo, squashfs and network filesystems: it
//! skips nfs, cifs and autofs because their `statvfs` is the one that hangs) and reads the
//! sensors; the space comes from our own `statvfs`, because sysinfo keeps only total and
//! available, and df's "used" (and so a Use% that matches df's) needs `f_bfree` too.

use crate::sample::{Filesystem, Filesystems, ReadAt, Sensor, Temperatures};
use std::collections::HashSet;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;
use sysinfo::{Components, DiskRefreshKind, Disks};

/// How often the thread reads. Space changes slowly next to a 1 s sample; a read costs one
/// `statvfs` per mount.
pub const PERIOD: Duration = Duration::from_secs(5);

/// The first sample waits at most this long for the thread's first read, so `snapshot` and a
/// first report show filesystems; later samples never wait.
const FIRST_WAIT: Duration = Duration::from_millis(500);

/// Filesystem types left out even though `statvfs` answers: an overlay reports the space of
/// the filesystem under it, listed already (a container host has one per container), except
/// when it is the root (perftop inside a container).
const DUPLICATE_TYPES: [&str; 1] = ["overlay"];

/// The latest finished reads: (CLOCK_BOOTTIME ns when finished, what was read).
#[derive(Default)]
struct Latest {
    mounts: Option<(u64, Vec<Filesystem>)>,
    sensors: Option<(u64, Vec<Sensor>)>,
}

struct Slot {
    latest: Mutex<Latest>,
    /// Signalled after each read, for the first sample's bounded wait.
    fresh: Condvar,
}

/// The sampler's end of the thread. Dropping it ends the thread after its current read.
pub struct Feed {
    slot: Arc<Slot>,
    at: ReadAt,
    /// Why the thread could not be started, said in every sample's problems.
    failed: Option<String>,
    waited: bool,
}

/// CLOCK_BOOTTIME in ns: `SampleTime::boottime_ns`'s clock, so derive can subtract the two.
pub fn boottime_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// A poisoned lock only means the other side panicked mid-swap; what is there is still whole.
fn lock(m: &Mutex<Latest>) -> MutexGuard<'_, Latest> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Feed {
    /// Starts the thread, reading every `period`.
    pub fn start(period: Duration) -> Feed {
        let slot = Arc::new(Slot {
            latest: Mutex::new(Latest::default()),
            fresh: Condvar::new(),
        });
        let weak = Arc::downgrade(&slot);
        // Before the spawn: the first read can finish before `spawn` returns.
        let started_ns = boottime_ns();
        let failed = std::thread::Builder::new()
            .name("perftop-sysinfo".into())
            .spawn(move || run(&weak, period))
            .err()
            .map(|e| format!("could not start the filesystem/sensor thread: {e}"));
        Feed {
            slot,
            at: ReadAt {
                read_ns: None,
                started_ns,
                period_ms: u64::try_from(period.as_millis()).unwrap_or(u64::MAX),
            },
            failed,
            waited: false,
        }
    }

    pub fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// The latest reads, never waiting on the thread (but for the first call's `FIRST_WAIT`).
    pub fn latest(&mut self) -> (Filesystems, Temperatures) {
        let mut g = lock(&self.slot.latest);
        if !self.waited && self.failed.is_none() {
            self.waited = true;
            g = self
                .slot
                .fresh
                .wait_timeout_while(g, FIRST_WAIT, |l| l.mounts.is_none())
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        let at = |read: Option<u64>| ReadAt {
            read_ns: read,
            ..self.at
        };
        let fs = Filesystems {
            at: at(g.mounts.as_ref().map(|m| m.0)),
            mounts: g.mounts.as_ref().map(|m| m.1.clone()).unwrap_or_default(),
        };
        let temps = Temperatures {
            at: at(g.sensors.as_ref().map(|s| s.0)),
            sensors: g.sensors.as_ref().map(|s| s.1.clone()).unwrap_or_default(),
        };
        (fs, temps)
    }
}

/// Stores one read; false once the sampler is gone (the thread then ends).
fn publish(slot: &Weak<Slot>, put: impl FnOnce(&mut Latest)) -> bool {
    let Some(slot) = slot.upgrade() else {
        return false;
    };
    put(&mut lock(&slot.latest));
    slot.fresh.notify_all();
    true
}

/// The sensors are listed again (every hwmon chip's directory, every file in it) once in this
/// many reads, a minute at `PERIOD`: chips come with drivers, not while a host runs. Between,
/// each known sensor's input file alone is read. Listing them was a third of this thread's
/// CPU on the 2-vCPU VM, which has no sensor at all.
const SENSORS_LISTED_EVERY: u32 = 12;

fn run(slot: &Weak<Slot>, period: Duration) {
    let mut disks = Disks::new();
    let mut components = Components::new();
    let mut reads = 0u32;
    loop {
        // Sensors first: a mount that hangs below leaves them one read old, not never read.
        if reads % SENSORS_LISTED_EVERY == 0 {
            components.refresh(true);
        } else {
            components.list_mut().iter_mut().for_each(|c| c.refresh());
        }
        reads = reads.wrapping_add(1);
        let sensors = sensors(&components);
        if !publish(slot, |l| l.sensors = Some((boottime_ns(), sensors))) {
            return;
        }
        // The list only: `nothing()` keeps sysinfo from calling statvfs itself (we do, once).
        disks.refresh_specifics(true, DiskRefreshKind::nothing());
        let found = disks.list().iter().filter_map(|d| {
            let mount = d.mount_point().to_string_lossy().into_owned();
            let fstype = d.file_system().to_string_lossy();
            // Before statvfs: a container host has hundreds of overlays `keep` drops anyway.
            if !wanted_type(&mount, &fstype) {
                return None;
            }
            let st = rustix::fs::statvfs(d.mount_point()).ok()?;
            Some(space(
                mount,
                d.name().to_string_lossy().into_owned(),
                d.file_system().to_string_lossy().into_owned(),
                &st,
            ))
        });
        let mounts = keep(found.collect());
        if !publish(slot, |l| l.mounts = Some((boottime_ns(), mounts))) {
            return;
        }
        std::thread::sleep(period);
    }
}

fn space(mount: String, device: String, fstype: String, st: &rustix::fs::StatVfs) -> Filesystem {
    // f_frsize is the unit of the block counts; f_bsize only the preferred I/O size (they
    // differ on some filesystems, and df multiplies by f_frsize).
    let unit = if st.f_frsize > 0 {
        st.f_frsize
    } else {
        st.f_bsize
    };
    let bytes = |blocks: u64| blocks.saturating_mul(unit);
    Filesystem {
        mount,
        device,
        fstype,
        size_bytes: bytes(st.f_blocks),
        free_bytes: bytes(st.f_bfree),
        avail_bytes: bytes(st.f_bavail),
        inodes: (st.f_files > 0).then_some(st.f_files),
        inodes_free: (st.f_files > 0).then_some(st.f_ffree),
        read_only: st.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY),
    }
}

fn wanted_type(mount: &str, fstype: &str) -> bool {
    mount == "/" || !DUPLICATE_TYPES.contains(&fstype)
}

/// What is worth a row: filesystems with blocks (pseudo ones report none), an overlay only at
/// `/`, and each filesystem once. A block device mounted twice (bind mounts, btrfs subvolumes)
/// reports the same space at every mount point: the shortest mount point stands for it.
/// Devices that are not paths (`tmpfs`) are separate filesystems at every mount point.
pub fn keep(mut found: Vec<Filesystem>) -> Vec<Filesystem> {
    found.retain(|f| f.size_bytes > 0 && wanted_type(&f.mount, &f.fstype));
    found.sort_by(|a, b| {
        (a.mount.len(), &a.mount)
            .cmp(&(b.mount.len(), &b.mount))
            .then(a.device.cmp(&b.device))
    });
    let mut seen = HashSet::new();
    found.retain(|f| {
        let key = if f.device.starts_with('/') {
            (f.device.clone(), String::new())
        } else {
            (f.device.clone(), f.mount.clone())
        };
        seen.insert(key)
    });
    found.sort_by(|a, b| a.mount.cmp(&b.mount));
    found
}

/// °C to one decimal: sysinfo's f32 widened to f64 would print 87.30000305175781.
fn celsius(v: Option<f32>) -> Option<f64> {
    v.filter(|c| c.is_finite())
        .map(|c| (f64::from(c) * 10.0).round() / 10.0)
}

fn sensors(components: &Components) -> Vec<Sensor> {
    let mut out: Vec<Sensor> = components
        .list()
        .iter()
        .map(|c| Sensor {
            label: c.label().to_string(),
            celsius: celsius(c.temperature()),
            max_c: celsius(c.max()),
            critical_c: celsius(c.critical()),
        })
        .collect();
    out.sort_by(|a, b| a.label.cmp(&b.label));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs(mount: &str, device: &str, fstype: &str, size: u64) -> Filesystem {
        Filesystem {
            mount: mount.into(),
            device: device.into(),
            fstype: fstype.into(),
            size_bytes: size,
            ..Filesystem::default()
        }
    }

    #[test]
    fn keeps_each_filesystem_once() {
        let kept = keep(vec![
            fs(
                "/var/lib/docker/overlay2/abc/merged",
                "overlay",
                "overlay",
                100,
            ),
            fs("/srv/bind", "/dev/vda", "ext4", 100),
            fs("/", "/dev/vda", "ext4", 100),
            fs("/dev/shm", "tmpfs", "tmpfs", 50),
            fs("/tmp", "tmpfs", "tmpfs", 50),
            fs("/sys/kernel/tracing", "tracefs", "tracefs", 0),
        ]);
        let mounts: Vec<&str> = kept.iter().map(|f| f.mount.as_str()).collect();
        assert_eq!(mounts, ["/", "/dev/shm", "/tmp"]);
        let root = keep(vec![fs("/", "overlay", "overlay", 100)]);
        assert_eq!(
            root.len(),
            1,
            "an overlay root is the container's own filesystem"
        );
    }

    #[test]
    fn space_is_counted_in_fragment_units() {
        // A real StatVfs to fill in (the crate forbids the `unsafe` a zeroed one needs).
        let mut st = rustix::fs::statvfs("/").expect("statvfs /");
        st.f_files = 0;
        st.f_bsize = 4096;
        st.f_frsize = 1024;
        st.f_blocks = 1000;
        st.f_bfree = 300;
        st.f_bavail = 250;
        let f = space("/x".into(), "/dev/x".into(), "ext4".into(), &st);
        assert_eq!(
            (f.size_bytes, f.free_bytes, f.avail_bytes),
            (1_024_000, 307_200, 256_000)
        );
        assert_eq!(f.inodes, None, "no inode limit reported: unknown");
    }

    #[test]
    fn first_read_arrives_and_the_thread_ends_with_the_feed() {
        // Bounds for a busy machine: on a quiet one the first read comes within FIRST_WAIT
        // and the thread ends within one period; at load 6-10 the 500 ms and a fixed 200 ms
        // sleep failed 2 runs of 3. What is judged: the read arrives, the thread ends.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut feed = Feed::start(Duration::from_millis(20));
        let (mut fs, mut temps) = feed.latest();
        while fs.at.read_ns.is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            (fs, temps) = feed.latest();
        }
        assert!(feed.failed().is_none());
        assert!(fs.at.read_ns.is_some(), "a first read within 20 s");
        assert!(temps.at.read_ns.is_some());
        let weak = Arc::downgrade(&feed.slot);
        drop(feed);
        while weak.upgrade().is_some() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(weak.upgrade().is_none(), "the thread ends with its feed");
    }
}
