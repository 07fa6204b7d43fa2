//! The module map's keeper: every `crate::` path in `src/` names a module listed above its own
//! in `lib.rs`'s map, and the map lists exactly the modules `lib.rs` declares.
//!
//! Why a test and not a convention: the pipeline (readers → sample → derive → findings → view
//! → screen) stays readable only while no stage reaches up into a later one. An upward import
//! compiles fine, so only a check that reads the sources catches it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The map in `lib.rs`'s doc comment: module name → position (lines `//! - `name`: …`).
fn map(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|l| l.strip_prefix("//! - `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(name, _)| name.to_string())
        .collect()
}

/// The modules `lib.rs` declares (`pub mod x;` and `mod x;`), the map's keeper itself aside.
fn declared(lib: &str) -> Vec<String> {
    let mut out: Vec<String> = lib
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
        })
        .filter_map(|l| l.strip_suffix(';'))
        .filter(|m| *m != "layers")
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

/// The top-level modules a source file names through `crate::` (also inside `crate::{a, b::c}`),
/// outside comments and outside a trailing `#[cfg(test)]` module: a test may reach anywhere.
fn imports(src: &str) -> Vec<String> {
    let code = match src.find("#[cfg(test)]\nmod ") {
        Some(at) => &src[..at],
        None => src,
    };
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or_default();
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            // `$crate::` and `pub(crate)` are not paths into this crate's modules.
            let before = &rest[..at];
            rest = &rest[at + "crate::".len()..];
            if before.ends_with('$') || before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or_default();
                out.extend(inner.split(',').map(|p| ident(p.trim())));
            } else {
                out.push(ident(rest));
            }
        }
    }
    out.retain(|m| !m.is_empty() && m != "self");
    out
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// `file (module) imports later (position)` for each path that runs up the map.
fn upward(files: &[(PathBuf, String)], order: &[String]) -> Vec<String> {
    let pos: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();
    let mut bad = Vec::new();
    for (path, src) in files {
        let Some(own) = top_module(path) else {
            continue;
        };
        let Some(&mine) = pos.get(own.as_str()) else {
            bad.push(format!(
                "{}: module `{own}` is not in the map",
                path.display()
            ));
            continue;
        };
        for m in imports(src) {
            match pos.get(m.as_str()) {
                Some(&theirs) if theirs > mine => bad.push(format!(
                    "{}: `{own}` imports `crate::{m}`, which the map puts after it",
                    path.display()
                )),
                Some(_) => {}
                None => bad.push(format!(
                    "{}: `crate::{m}` is not in the map",
                    path.display()
                )),
            }
        }
    }
    bad
}

/// `src/ui/app.rs` → `ui`; `src/units.rs` → `units`; `lib.rs`, `main.rs` and this file → none.
fn top_module(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(src_dir()).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main" | "layers")).then(|| name.to_string())
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    let entries = std::fs::read_dir(dir).expect("src/ lists");
    for e in entries {
        let path = e.expect("src/ entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&path).expect("source reads");
            out.push((path, text));
        }
    }
}

fn lib() -> String {
    std::fs::read_to_string(src_dir().join("lib.rs")).expect("lib.rs reads")
}

#[test]
fn the_map_lists_every_module_lib_declares_once() {
    let lib = lib();
    let mut listed = map(&lib);
    let n = listed.len();
    listed.sort();
    listed.dedup();
    assert_eq!(listed.len(), n, "a module is listed twice in lib.rs's map");
    assert_eq!(listed, declared(&lib));
}

#[test]
fn no_module_imports_one_listed_after_it() {
    let mut files = Vec::new();
    sources(&src_dir(), &mut files);
    assert!(files.len() > 100, "walked {} files", files.len());
    let bad = upward(&files, &map(&lib()));
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

/// The checker itself: it sees plain paths, groups and nested uses, and skips comments,
/// `pub(crate)`, `$crate` and the test module.
#[test]
fn an_upward_import_is_caught() {
    let order: Vec<String> = ["units", "sample", "source", "ui"]
        .map(String::from)
        .to_vec();
    let file = |module: &str, src: &str| (src_dir().join(module).join("x.rs"), src.to_string());
    let files = [
        file(
            "source",
            "use crate::sample::Sample;\npub(crate) fn f() {}\n",
        ),
        file(
            "source",
            "// crate::ui::App is not imported\nuse $crate::ui;\n",
        ),
        file(
            "source",
            "fn f() {}\n#[cfg(test)]\nmod tests { use crate::ui::App; }\n",
        ),
        file("sample", "use crate::{units::num, source::Reader};\n"),
        file("units", "let x = crate::ui::draw(1);\n"),
        file("units", "use crate::nowhere;\n"),
    ];
    let bad = upward(&files, &order);
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(bad[0].contains("`sample` imports `crate::source`"));
    assert!(bad[1].contains("`units` imports `crate::ui`"));
    assert!(bad[2].contains("`crate::nowhere` is not in the map"));
}
