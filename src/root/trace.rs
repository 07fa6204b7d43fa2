//! What the readers touched through a traced `Root`: files read, directories listed or found,
//! symlinks read. `perftop capture` copies exactly this into a fixture root.

use std::collections::{BTreeSet, HashSet};

/// Paths relative to the root (`proc/stat`), each recorded once.
#[derive(Debug, Default, Clone)]
pub struct Trace {
    /// Files opened (or found unreadable), in the order they were first read: `proc/uptime`
    /// comes first, as in a sample.
    pub files: Vec<String>,
    seen: HashSet<String>,
    /// Directories listed, found by `is_dir`, or found as a subdirectory in a listing.
    pub dirs: BTreeSet<String>,
    /// Symlinks whose target was read (a NIC's `device/driver`).
    pub links: BTreeSet<String>,
    /// Paths an existence check answered yes for (a file or a directory).
    pub existing: BTreeSet<String>,
}

/// `dir/name` without a leading slash (`name` empty: `dir` is the path).
fn rel_of(dir: &str, name: &str) -> String {
    let dir = dir.trim_start_matches('/');
    if name.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

impl Trace {
    pub(crate) fn file(&mut self, dir: &str, name: &str) {
        let rel = rel_of(dir, name);
        if self.seen.insert(rel.clone()) {
            self.files.push(rel);
        }
    }

    pub(crate) fn dir(&mut self, rel: &str) {
        self.dirs.insert(rel_of(rel, ""));
    }

    pub(crate) fn listed(&mut self, rel: &str, subdirs: &[String]) {
        self.dir(rel);
        for d in subdirs {
            self.dirs.insert(rel_of(rel, d));
        }
    }

    pub(crate) fn link(&mut self, rel: &str) {
        self.links.insert(rel_of(rel, ""));
    }

    pub(crate) fn existing(&mut self, rel: &str) {
        self.existing.insert(rel_of(rel, ""));
    }
}

#[cfg(test)]
mod tests {
    use crate::root::Root;
    use std::sync::{Arc, Mutex};

    #[test]
    fn records_reads_listings_links_and_yes_answers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::create_dir_all(d.join("sys/q/rx-0")).expect("mkdir");
        std::fs::create_dir_all(d.join("sys/q/tx-0")).expect("mkdir");
        std::fs::write(d.join("sys/q/x"), "1\n").expect("write");
        std::fs::write(d.join("proc_stat"), "1\n").expect("write");
        std::os::unix::fs::symlink("../../drivers/virtio_net", d.join("sys/drv")).expect("ln");
        let trace = Arc::new(Mutex::new(super::Trace::default()));
        let root = Root::new(d).traced(trace.clone());
        assert_eq!(root.read_u64("/proc_stat"), Some(1));
        assert_eq!(root.read_u64("proc_stat"), Some(1));
        assert!(root.read("nope").is_err());
        assert_eq!(root.list_dir("sys/q"), ["rx-0", "tx-0", "x"]);
        assert_eq!(root.link_name("sys/drv").as_deref(), Some("virtio_net"));
        assert!(root.exists("sys/q/x"));
        assert!(!root.exists("sys/none"));
        assert!(!root.is_dir("sys/q/x"));
        let t = trace.lock().expect("lock").clone();
        assert_eq!(t.files, ["proc_stat"]);
        assert_eq!(
            t.dirs.iter().collect::<Vec<_>>(),
            ["sys/q", "sys/q/rx-0", "sys/q/tx-0"]
        );
        assert_eq!(t.links.iter().collect::<Vec<_>>(), ["sys/drv"]);
        assert_eq!(t.existing.iter().collect::<Vec<_>>(), ["sys/q/x"]);
    }
}
