//! Build facts for `perftop --version`: the git commit the binary was built from (when built
//! from a checkout) and the target, statically linked or not.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let commit =
        git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "no git checkout".into());
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown target".into());
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    // Rust's musl targets link statically unless told `-C target-feature=-crt-static`, and
    // cargo does not list that default among the target features (seen: a static-pie musl
    // build said "dynamic").
    let musl = std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "musl");
    let rustflags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let statik = features.split(',').any(|f| f == "crt-static")
        || (musl && !rustflags.contains("-crt-static"));
    let linked = if statik { "static" } else { "dynamic" };
    println!("cargo:rustc-env=PERFTOP_BUILD={commit}, {target}, {linked}");
    // A new commit changes HEAD or the branch it names (a worktree's git dir is elsewhere).
    // Watching only files that exist: a missing one would rerun this on every build.
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(dir) = git(&["rev-parse", "--git-dir"]).map(PathBuf::from) {
        let head = dir.join("HEAD");
        if head.exists() {
            println!("cargo:rerun-if-changed={}", head.display());
        }
        if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
            let common = git(&["rev-parse", "--git-common-dir"]).map_or(dir.clone(), PathBuf::from);
            let file = common.join(&r);
            if file.exists() {
                println!("cargo:rerun-if-changed={}", file.display());
            }
            let packed = common.join("packed-refs");
            if packed.exists() {
                println!("cargo:rerun-if-changed={}", packed.display());
            }
        }
    }
}
