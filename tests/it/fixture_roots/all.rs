//! Every fixture: no negative numbers or shares over 100, and every pane within 80 columns.

use super::*;

#[test]
fn every_fixture_derives_without_negative_numbers_or_shares_over_100() {
    for name in fixtures() {
        let fx = load(name);
        for d in [
            derive(None, &fx.t0),
            fx.d.clone(),
            derive(Some(&fx.t1), &fx.t0),
        ] {
            let v = serde_json::to_value(&d).expect("derived serializes");
            assert_no_negative(&v, name);
        }
    }
}

#[test]
fn batch_prints_every_pane_within_80_columns() {
    let titles = [
        "CPU power (C/P-states)",
        "NUMA memory",
        "HugePages / THP",
        "Dirty / writeback",
        "Disks (iostat -x)",
        "Softirq / NIC queues",
    ];
    for name in fixtures() {
        let root = fixture(name).join("t1");
        let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
            .args(["batch", "-n", "1", "--root"])
            .arg(&root)
            .output()
            .expect("run perftop batch");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8 report");
        for t in titles {
            assert!(text.contains(t), "{name}: no {t:?} section in\n{text}");
        }
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "{name}: {} columns: {line:?}",
                line.chars().count()
            );
        }
    }
}
