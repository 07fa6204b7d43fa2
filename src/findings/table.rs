//! Holds the rule table, the `Thresholds` struct (the config keys) and docs/findings.md's
//! findings table to one another: each rule is documented once, with the keys it reads and
//! their defaults, and every config key belongs to a rule or to the strip.

use super::{Thresholds, RULES, RULE_IDS, STRIP_KEYS};
use std::collections::BTreeMap;

/// The findings table of docs/findings.md: rule id → its "holds when (defaults)" cell.
fn documented() -> BTreeMap<&'static str, &'static str> {
    let doc = include_str!("../../docs/findings.md");
    let section = doc
        .split("## Findings thresholds")
        .nth(1)
        .and_then(|rest| rest.split("\n# ").next())
        .unwrap_or("");
    section
        .lines()
        .filter_map(|l| {
            let mut cells = l.strip_prefix("| `")?.splitn(2, '`');
            let id = cells.next()?;
            let when = cells.next()?.strip_prefix(" |")?.split(" |").next()?;
            (id.contains('.') && !id.contains(' ')).then_some((id, when))
        })
        .collect()
}

/// Every config key with its default, as the config file spells it.
fn defaults() -> BTreeMap<String, f64> {
    let json = serde_json::to_value(Thresholds::default()).expect("thresholds serialize");
    json.as_object()
        .expect("thresholds are a table")
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
        .collect()
}

/// The backticked config keys a table cell names, each with the number written after it
/// (`disk_aqu_sz` 4, `fs_full_pct` 95%), in order, first mention only.
fn keys_in(cell: &str, keys: &BTreeMap<String, f64>) -> Vec<(String, Option<f64>)> {
    let mut out: Vec<(String, Option<f64>)> = Vec::new();
    let mut parts = cell.split('`');
    parts.next();
    while let (Some(word), Some(after)) = (parts.next(), parts.next()) {
        if keys.contains_key(word) && !out.iter().any(|(k, _)| k == word) {
            let n = after
                .trim_start()
                .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .next()
                .and_then(|n| n.parse().ok());
            out.push((word.to_string(), n));
        }
    }
    out
}

#[test]
fn rule_ids_are_unique_and_documented_once() {
    let mut ids = RULE_IDS.to_vec();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), RULE_IDS.len(), "duplicate rule id");
    let table = documented();
    let listed: Vec<&str> = table.keys().copied().collect();
    assert_eq!(
        listed, ids,
        "docs/findings.md's table and RULES list other ids"
    );
}

/// A rule's row names exactly the keys the rule carries, each with its default value.
#[test]
fn each_row_names_its_rules_keys_with_their_defaults() {
    let mut keys = defaults();
    // A row may mention the strip's timing (`memory.oom_kill`: "not after `raise_after`").
    keys.retain(|k, _| !STRIP_KEYS.contains(&k.as_str()));
    let table = documented();
    for rule in &RULES {
        let cell = table.get(rule.id).copied().unwrap_or_default();
        let named = keys_in(cell, &keys);
        let names: Vec<&str> = named.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, rule.thresholds, "{}: table vs RULES", rule.id);
        for (k, written) in &named {
            let default = keys[k.as_str()];
            // `oom_kill_hold_s` 60 s, `numa_miss_ratio` 0.10: same number, any notation.
            assert_eq!(
                *written,
                Some(default),
                "{}: docs give `{k}` {written:?}, the default is {default}",
                rule.id
            );
        }
    }
}

/// Every config key belongs to a rule or to the strip, and every key a rule names exists.
#[test]
fn every_config_key_has_an_owner() {
    let keys = defaults();
    let owned: Vec<&str> = RULES
        .iter()
        .flat_map(|r| r.thresholds.iter().copied())
        .chain(STRIP_KEYS)
        .collect();
    for k in keys.keys() {
        assert!(owned.contains(&k.as_str()), "config key {k} has no rule");
    }
    for k in owned {
        assert!(keys.contains_key(k), "{k} is no config key");
    }
}

/// The checker reads what the docs write: numbers after keys, units and `%` aside.
#[test]
fn keys_in_reads_numbers_after_keys() {
    let keys: BTreeMap<String, f64> = [("a_pct".to_string(), 95.0), ("b".to_string(), 0.1)]
        .into_iter()
        .collect();
    let got = keys_in(
        "x >= `a_pct` 95% or `b` 0.10/s, `c` 3, `a_pct` again",
        &keys,
    );
    assert_eq!(
        got,
        vec![
            ("a_pct".to_string(), Some(95.0)),
            ("b".to_string(), Some(0.1))
        ]
    );
    assert_eq!(
        keys_in("`b` / `_crit`", &keys),
        vec![("b".to_string(), None)]
    );
}
