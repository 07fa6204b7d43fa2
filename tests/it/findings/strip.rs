//! The findings strip's text at 80 columns.

use super::*;

fn active(id: &str, sev: &str, since: i64, message: &str) -> ActiveFinding {
    let severity = match sev {
        "crit" => Severity::Crit,
        "warn" => Severity::Warn,
        _ => Severity::Info,
    };
    ActiveFinding {
        finding: Finding {
            id: id.into(),
            severity,
            message: message.into(),
            pane: perftop::pane::Pane::Cpu,
            tweak: None,
            culprits: Vec::new(),
            event: false,
        },
        since_ms: since,
        samples: 3,
        clearing: None,
    }
}

#[test]
fn strip_at_80_columns() {
    let list = vec![
        active(
            "cpu.powersave_busy",
            "info",
            1,
            "1 of 4 CPUs >= 50% busy under governor powersave: ramping adds latency",
        ),
        active(
            "dirty.throttled",
            "warn",
            2,
            "dirty+wb 1.1G past freerun 1.1G: writers throttled (vm.dirty_ratio 20)",
        ),
        active(
            "disk.saturated",
            "crit",
            3,
            "sda aqu-sz 12.0, await 85.0ms vs usual 6.1ms: queue building",
        ),
        active(
            "net.drops",
            "warn",
            1,
            "softnet drops 120/s (backlog full), squeezes 35/s, eth0 drops 12/s, and more",
        ),
        active(
            "pagetables.large",
            "crit",
            9,
            "PageTables 5.0G = 24.4% of RAM 20G: huge pages would shrink them",
        ),
    ];
    let all = strip_lines(&list, 80, 24);
    assert_eq!(
        all,
        [
            "CRIT sda aqu-sz 12.0, await 85.0ms vs usual 6.1ms: queue building",
            "CRIT PageTables 5.0G = 24.4% of RAM 20G: huge pages would shrink them",
            "WARN softnet drops 120/s (backlog full), squeezes 35/s, eth0 drops 12/s, and mo~",
            "WARN dirty+wb 1.1G past freerun 1.1G: writers throttled (vm.dirty_ratio 20)",
            "INFO 1 of 4 CPUs >= 50% busy under governor powersave: ramping adds latency",
        ]
    );
    let cut = strip_lines(&list, 80, 3);
    assert_eq!(
        cut,
        [
            "CRIT sda aqu-sz 12.0, await 85.0ms vs usual 6.1ms: queue building",
            "CRIT PageTables 5.0G = 24.4% of RAM 20G: huge pages would shrink them",
            "+3 more: net.drops, dirty.throttled, cpu.powersave_busy",
        ]
    );
    for line in strip_lines(&list, 40, 2) {
        assert!(line.chars().count() <= 40, "{line}");
    }
    // One line (80x24): the most severe message in full, then the count, never ids alone.
    assert_eq!(
        strip_lines(&list, 80, 1),
        ["CRIT sda aqu-sz 12.0, await 85.0ms vs usual 6.1ms: queue building +4 more"]
    );
    // Too narrow for the message: it is cut, the count stays.
    let narrow = strip_lines(&list, 40, 1);
    assert_eq!(narrow, ["CRIT sda aqu-sz 12.0, await 85.~ +4 more"]);
    assert!(strip_lines(&[], 80, 3).is_empty());
    assert!(strip_lines(&list, 80, 0).is_empty());
}
