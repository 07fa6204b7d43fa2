//! What this run of the dashboard is, for the header and the `R` key: who it runs as (tweaks
//! need root; replay says which recording), the `--root` it reads, perftop's own cost, and the
//! recorder that writes the live stream to a file.

use super::selfcost::SelfCost;
use crate::record::live::LiveRecorder;
use std::path::PathBuf;

pub struct Session {
    /// Shown in the header: `root` or `user` (tweaks need root), or the replayed file.
    pub privilege: String,
    /// `--root DIR`, when used.
    pub root_label: Option<String>,
    /// `perftop ssh`: the link's state while samples do not flow ("link lost at ...").
    pub link: Option<String>,
    /// perftop's own CPU% and RSS (live mode only).
    pub self_cost: SelfCost,
    /// `R`: the live stream being recorded...
    pub recording: LiveRecorder,
    /// ...and where new recordings go.
    pub record_dir: PathBuf,
}

impl Default for Session {
    fn default() -> Session {
        Session {
            privilege: String::new(),
            root_label: None,
            link: None,
            self_cost: SelfCost::default(),
            recording: LiveRecorder::Off,
            record_dir: PathBuf::from("."),
        }
    }
}
