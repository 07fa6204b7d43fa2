//! The audit line of an undo says what the undo wrote (issue 41 item 12): the value restored
//! and each file from what it held to that value, not the apply's before/after repeated.

use crate::support;
use perftop::root::Root;
use perftop::tweak::apply::{self, FsWriter};
use perftop::tweak::undo::Which;
use perftop::tweak::{plan, Ctx};

#[test]
fn an_undo_audits_its_own_direction() {
    let _writes = support::writing();
    let dir = tempfile::tempdir().expect("tempdir");
    let root_dir = dir.path().join("root");
    support::copy_tree(&support::fixture("intel-pstate/t0"), &root_dir);
    let ctx = Ctx {
        root: Root::new(&root_dir),
        state_dir: dir.path().join("state"),
        privileged: true,
        read_only: false,
    };
    let rel = "proc/sys/vm/dirty_background_ratio";
    assert_eq!(ctx.root.read_line(rel).as_deref(), Some("10"));
    let p = plan::plan(&ctx, "vm.dirty_background_ratio", "15").expect("plan");
    assert!(apply::apply(&ctx, &p, &mut FsWriter).expect("apply").ok());
    assert_eq!(ctx.root.read_line(rel).as_deref(), Some("15"));
    apply::undo(&ctx, &mut FsWriter, Which::Last, None).expect("undo");
    assert_eq!(ctx.root.read_line(rel).as_deref(), Some("10"));
    let audit = std::fs::read_to_string(ctx.state_dir.join("audit.jsonl")).expect("audit");
    let lines: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let apply = &lines[0];
    let undo = &lines[1];
    assert_eq!(apply["action"], "apply");
    assert_eq!(apply["value"], "15");
    let t = &apply["targets"][0];
    assert_eq!((&t["before"], &t["after"]), (&"10".into(), &"15".into()));
    assert_eq!(undo["action"], "undo");
    assert_eq!(undo["value"], "10", "the value the undo restored:\n{undo}");
    let t = undo["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .find(|t| t["file"] == rel)
        .unwrap_or_else(|| panic!("no {rel} in\n{undo}"));
    assert_eq!(
        t["before"], "15",
        "what the file held before the undo:\n{undo}"
    );
    assert_eq!(t["after"], "10", "what the undo wrote:\n{undo}");
    assert_eq!(t["write"], true);
    // The twin (dirty_background_bytes, 0 all along) was not written by the undo.
    let twin = undo["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .find(|t| t["file"] == "proc/sys/vm/dirty_background_bytes");
    if let Some(twin) = twin {
        assert_eq!(twin["write"], false, "{undo}");
        assert_eq!(twin["before"], twin["after"], "{undo}");
    }
}
