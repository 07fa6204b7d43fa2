//! The file-level import graph of `src/ui` (which file names which, through `super::`,
//! `crate::ui::` or a child module's name), and the test that keeps it free of circles: a part
//! of the screen that imports what imports it cannot be read, tested or moved alone.
//! Test modules are left out (their `use super::*` names their own file).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (within `ui`) -> its file, relative to the `ui` directory.
type Files = BTreeMap<Vec<String>, String>;

fn files(dir: &Path, prefix: &[String], out: &mut Files) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        if path.is_dir() {
            let mut p = prefix.to_vec();
            p.push(name);
            files(&path, &p, out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let mut module = prefix.to_vec();
            if stem != "mod" {
                module.push(stem.to_string());
            }
            let rel: Vec<&str> = prefix
                .iter()
                .map(String::as_str)
                .chain([name.as_str()])
                .collect();
            out.insert(module, rel.join("/"));
        }
    }
}

/// Words and `::`, `{`, `}`, `,` of `src`, without comments and without its test module (from
/// `#[cfg(test)] mod tests {` on: rustfmt puts it last).
fn tokens(src: &str) -> Vec<String> {
    let code = src
        .split("#[cfg(test)]\nmod tests {")
        .next()
        .unwrap_or_default();
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or_default();
        let mut word = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_alphanumeric() || c == '_' {
                word.push(c);
                continue;
            }
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            match c {
                ':' if chars.peek() == Some(&':') => {
                    chars.next();
                    out.push("::".into());
                }
                '{' | '}' | ',' => out.push(c.to_string()),
                _ => out.push(" ".into()),
            }
        }
        if !word.is_empty() {
            out.push(word);
        }
        out.push(" ".into());
    }
    out
}

/// The paths that start at `t[i]` (`a::b::c`, or `a::{b, c::d}`), each as its words.
fn paths(t: &[String], i: usize) -> Vec<Vec<String>> {
    let mut head = vec![t[i].clone()];
    let mut k = i + 1;
    while t.get(k).is_some_and(|s| s == "::") {
        match t.get(k + 1).map(String::as_str) {
            Some("{") => {
                let mut out = Vec::new();
                let mut j = k + 2;
                while let Some(s) = t.get(j) {
                    if s == "}" {
                        break;
                    }
                    if s.chars().all(|c| c.is_alphanumeric() || c == '_') {
                        for tail in paths(t, j) {
                            out.push(head.iter().cloned().chain(tail).collect());
                        }
                        // Skip to the next item of this group.
                        let mut depth = 0;
                        while let Some(s) = t.get(j) {
                            match s.as_str() {
                                "{" => depth += 1,
                                "}" if depth == 0 => break,
                                "}" => depth -= 1,
                                "," if depth == 0 => break,
                                _ => {}
                            }
                            j += 1;
                        }
                        continue;
                    }
                    j += 1;
                }
                return out;
            }
            Some(w) if w.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                head.push(w.to_string());
                k += 2;
            }
            _ => break,
        }
    }
    vec![head]
}

/// The file a path names: the longest prefix of it that is a module file.
fn resolve<'a>(files: &'a Files, path: &[String]) -> Option<&'a String> {
    (0..=path.len()).rev().find_map(|n| files.get(&path[..n]))
}

/// Every edge `from -> to` between the files under `dir`.
pub fn edges(dir: &Path) -> BTreeSet<(String, String)> {
    let mut all = Files::new();
    files(dir, &[], &mut all);
    let mut edges = BTreeSet::new();
    for (here, rel) in &all {
        let Ok(src) = std::fs::read_to_string(dir.join(rel)) else {
            continue;
        };
        let t = tokens(&src);
        let children: Vec<&String> = all
            .keys()
            .filter(|k| k.len() == here.len() + 1 && k.starts_with(here))
            .filter_map(|k| k.last())
            .collect();
        let colons = "::".to_string();
        for i in 0..t.len() {
            // The start of a path: not the middle of one.
            if i > 0 && t[i - 1] == "::" {
                continue;
            }
            for p in paths(&t, i) {
                let target = if p.starts_with(&["crate".to_string(), "ui".to_string()]) {
                    p[2..].to_vec()
                } else if p[0] == "super" {
                    let ups = p.iter().take_while(|w| *w == "super").count();
                    // `pub(super)` names no module.
                    if ups == p.len() {
                        continue;
                    }
                    let Some(base) = here.len().checked_sub(ups) else {
                        continue;
                    };
                    here[..base].iter().chain(&p[ups..]).cloned().collect()
                } else if children.contains(&&p[0])
                    && (p.len() > 1 || t.get(i + 1) == Some(&colons))
                {
                    // `child::item`, or `child::*`.
                    here.iter().chain(&p).cloned().collect()
                } else if p[0] == "self" && p.len() > 1 {
                    here.iter().chain(&p[1..]).cloned().collect()
                } else {
                    continue;
                };
                if let Some(to) = resolve(&all, &target).filter(|to| *to != rel) {
                    edges.insert((rel.clone(), to.clone()));
                }
            }
        }
    }
    edges
}

/// The edges that lie on a circle: `a -> b` where `b` reaches `a` again.
pub fn in_cycles(edges: &BTreeSet<(String, String)>) -> Vec<(String, String)> {
    let reaches = |from: &str, to: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            if n == to {
                return true;
            }
            if seen.insert(n.clone()) {
                todo.extend(
                    edges
                        .iter()
                        .filter(|(a, _)| *a == n)
                        .map(|(_, b)| b.clone()),
                );
            }
        }
        false
    };
    edges
        .iter()
        .filter(|(a, b)| reaches(b, a))
        .cloned()
        .collect()
}

#[test]
fn no_import_circle_among_ui_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui");
    let edges = edges(&dir);
    // The graph is read at all: app.rs names the timeline it is made of.
    assert!(
        edges.contains(&("app.rs".into(), "timeline.rs".into())),
        "{edges:?}"
    );
    assert!(edges.len() > 60, "{} edges", edges.len());
    let cycles = in_cycles(&edges);
    assert!(cycles.is_empty(), "edges on a circle: {cycles:#?}");
}
