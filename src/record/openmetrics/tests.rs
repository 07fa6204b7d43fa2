//! Names, units, reserved suffixes and value forms of the OpenMetrics output.

use super::*;

/// Field names in Prometheus' base units, with the factor that takes the value there.
#[test]
fn names_and_factors_in_base_units() {
    for (key, name, factor) in [
        ("threshold_kb", "threshold_bytes", 1024.0),
        ("dirtied_kb_per_s", "dirtied_bytes_per_second", 1024.0),
        ("rkB/s", "r_bytes_per_second", 1024.0),
        ("r/s", "r_per_second", 1.0),
        ("per_s", "per_second", 1.0),
        ("some_pct", "some_ratio", 0.01),
        ("some_avg10", "some_avg10_ratio", 0.01),
        ("util", "util_ratio", 0.01),
        ("r_await", "r_await_seconds", 0.001),
        ("rareq-sz", "rareq_sz_bytes", 1024.0),
        ("aqu-sz", "aqu_sz", 1.0),
        ("dirty_expire_centisecs", "dirty_expire_seconds", 0.01),
        ("uptime_s", "uptime_seconds", 1.0),
        ("cgroups_secs", "cgroups_seconds", 1.0),
        ("temperature_c", "temperature_celsius", 1.0),
        ("dirty_ratio", "sysctl_dirty_ratio", 0.01),
        ("dirty_bytes", "sysctl_dirty_bytes", 1.0),
        ("oom_kills", "oom_kills", 1.0),
    ] {
        assert_eq!(unit(key), (name.to_string(), factor), "{key}");
    }
}

/// OpenMetrics' reserved suffixes, each `_` and a word, are found by the name's last part.
#[test]
fn reserved_suffixes_are_found_by_the_last_part() {
    for (name, reserved) in [
        ("perftop_tcp_retrans_total", true),
        ("perftop_x_count", true),
        ("perftop_x_sum", true),
        ("perftop_x_gsum", true),
        ("perftop_x_bucket", true),
        ("perftop_x_created", true),
        ("perftop_x_info", true),
        ("perftop_x_gcount", true),
        ("perftop_x__total", true),
        ("perftop_x_totals", false),
        ("perftop_xtotal", false),
        ("perftop_interrupts_count_per_second", false),
        ("total", false),
        ("_total", true),
        ("", false),
    ] {
        assert_eq!(is_reserved(name), reserved, "{name}");
    }
}

/// A load average the kernel wrote as 2.70 is stored as an f32 and printed as 2.7, not as
/// the f64 the f32 widens to (2.700000047683716).
#[test]
fn f32_values_print_in_their_shortest_form() {
    let mut s = crate::sample::Sample::default();
    s.host.loadavg = Some([2.7, 0.1, 3.12]);
    let d = crate::assess::assess(None, &s, &Default::default());
    let mut out = Vec::new();
    let mut om = OpenMetrics::default();
    om.add(1_000, &d, &["host"], false).expect("add");
    om.write(&mut out, &mut |_| {}).expect("write");
    let text = String::from_utf8(out).expect("utf8");
    assert!(
        text.contains("perftop_host_loadavg{index=\"0\"} 2.7 ")
            && text.contains("perftop_host_loadavg{index=\"2\"} 3.12 "),
        "{text}"
    );
    assert!(!text.contains("2.700000047683716"), "{text}");
    assert!(!text.contains("0.10000000149011612"), "{text}");
}

/// Label values are escaped as the three `replace`s did: unsafe characters `?` first, then
/// backslash, quote and line break, in runs of any length, at either end, side by side.
#[test]
fn label_values_escape_as_the_replaces_did() {
    let reference = |s: &str| {
        crate::safe::text(s)
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    };
    for s in [
        "",
        "vda",
        "a\\b",
        "\"q\"",
        "line\nbreak\n",
        "\\\"\n\\",
        "C:\\path with \"quotes\"",
        "bell\u{7}, esc\u{1b}[31m, del\u{7f}, bidi\u{202e}",
        "ü née 中文 \\n",
    ] {
        let mut out = String::from("x");
        push_escaped(&mut out, s);
        assert_eq!(out, format!("x{}", reference(s)), "{s:?}");
    }
}
