//! What ships beside the binary: the man page (`perftop man`, rendered by `man -l`) and the
//! completion scripts (`perftop completions bash`, sourced by bash and asked to complete).

use crate::support;

use std::process::Command;

fn perftop(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(args)
        .output()
        .expect("run perftop");
    assert!(
        o.status.success(),
        "perftop {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `man -l` renders the page without a groff warning, and it holds every command, every key
/// row of the help screen, every pane and every rule, from the same tables the program uses.
#[test]
fn the_man_page_renders_and_lists_every_command_key_pane_and_rule() {
    let page = perftop(&["man"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perftop.1");
    std::fs::write(&path, &page).expect("write page");
    if !have("man") || !have("groff") {
        support::skip(
            "the_man_page_renders_and_lists_every_command_key_pane_and_rule",
            "man or groff not installed (apt-get install man-db groff)",
        );
        return;
    }
    let o = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(&path)
        .env("MANWIDTH", "80")
        .env("MAN_KEEP_FORMATTING", "0")
        .env("MANPAGER", "cat")
        .output()
        .expect("man -l");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "man -l failed: {stderr}");
    assert!(stderr.trim().is_empty(), "groff warns: {stderr}");
    // Formatting (bold, hyphens) out of the way.
    let text = String::from_utf8_lossy(&o.stdout).replace(['\u{2010}', '\u{2212}'], "-");
    let plain: String = {
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if chars.peek() == Some(&'\u{8}') {
                chars.next();
                continue;
            }
            out.push(c);
        }
        out
    };
    for section in [
        "NAME",
        "SYNOPSIS",
        "OPTIONS",
        "COMMANDS",
        "KEYS",
        "PANES",
        "FINDINGS",
        "FILES",
        "EXIT STATUS",
    ] {
        assert!(
            plain.contains(&format!("\n{section}\n")),
            "no {section} section"
        );
    }
    for cmd in [
        "snapshot",
        "delta",
        "batch",
        "record",
        "dump",
        "replay",
        "cut",
        "capture",
        "export",
        "man",
        "completions",
        "tweak",
    ] {
        assert!(plain.contains(&format!("perftop {cmd} ")), "{cmd} missing");
    }
    for rule in perftop::findings::RULE_IDS {
        assert!(plain.contains(rule), "rule {rule} missing");
    }
    for p in perftop::pane::PANES {
        assert!(plain.contains(p.title()), "pane {} missing", p.title());
    }
    // Justified text: compare with single spaces.
    let flat = plain.split_whitespace().collect::<Vec<_>>().join(" ");
    for (_, what) in perftop::ui::keymap::help_rows(false) {
        let first: String = what
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(flat.contains(&first), "key row {what:?} missing");
    }
    assert!(
        flat.contains("disk_aqu_sz = 4.0,"),
        "thresholds' defaults missing"
    );
}

/// bash sources the script and completes `perftop du` to `dump` and `perftop dump --fo` to
/// `--format`; zsh and fish scripts are printed (their shells are not installed here).
#[test]
fn bash_completes_commands_and_options() {
    let script = perftop(&["completions", "bash"]);
    for shell in ["zsh", "fish"] {
        assert!(!perftop(&["completions", shell]).is_empty(), "{shell}");
    }
    if !have("bash") {
        support::skip("bash_completes_commands_and_options", "no bash");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perftop.bash");
    std::fs::write(&path, script).expect("write script");
    let complete = |line: &str| -> Vec<String> {
        let words: Vec<&str> = line.split(' ').collect();
        let prog = format!(
            "source {path}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{line}'; \
             COMP_POINT=${{#COMP_LINE}}; _perftop perftop '{cur}' '{prev}'; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            path = path.display(),
            words = words
                .iter()
                .map(|w| format!("'{w}'"))
                .collect::<Vec<_>>()
                .join(" "),
            cword = words.len() - 1,
            cur = words[words.len() - 1],
            prev = words[words.len().saturating_sub(2)],
        );
        let o = Command::new("bash")
            .args(["-c", &prog])
            .output()
            .expect("bash");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    };
    assert_eq!(complete("perftop du"), ["dump"]);
    assert_eq!(complete("perftop dump --fo"), ["--format"]);
    // A command's completion offers only its own options: dump has no --root.
    assert!(complete("perftop dump --r").is_empty());
    assert_eq!(complete("perftop batch --r"), ["--root"]);
}

/// `--version` names the commit (in a checkout: the one `git rev-parse` gives) and the target,
/// static or not.
#[test]
fn version_names_the_commit_and_the_target() {
    let v = perftop(&["--version"]);
    let target = if cfg!(target_env = "musl") {
        "x86_64-unknown-linux-musl, static"
    } else {
        "x86_64-unknown-linux-gnu, dynamic"
    };
    assert!(
        v.starts_with(&format!("perftop {} (", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    assert!(v.trim_end().ends_with(&format!("{target})")), "{v}");
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    match head {
        Ok(o) if o.status.success() => {
            let commit = String::from_utf8_lossy(&o.stdout).trim().to_string();
            assert!(v.contains(&format!("({commit}, ")), "{v} vs HEAD {commit}");
        }
        _ => support::skip(
            "version_names_the_commit_and_the_target",
            "not a git checkout: the commit is not known",
        ),
    }
}
