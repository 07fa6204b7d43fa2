//! Escape bytes in kernel strings never reach a terminal: every string field of a fixture gets
//! an escape sequence, and no text perftop writes (batch, snapshot, delta, dump in every
//! format, stderr) holds a control character other than a line break.

use crate::support;

use std::fs;
use std::path::Path;
use std::process::Command;

/// ESC ] 0 ; title BEL (retitle the window), ESC [ 2 J (clear the screen), 8-bit CSI, CR.
/// No whitespace, so a parser sees one word.
const EVIL: &str = "\x1b]0;PWN\x07\x1b[2J\u{9b}31m\r";

/// Puts `EVIL` into every string-valued file of `root` (one-line files holding letters) and
/// into the names in the tables (IRQ, NIC, disk names, CPU model).
fn poison(dir: &Path) {
    let mut files = Vec::new();
    walk(dir, &mut files);
    for f in files {
        let Ok(text) = fs::read_to_string(&f) else {
            continue;
        };
        let rel = f.strip_prefix(dir).expect("under root").to_string_lossy();
        let out = match rel.as_ref() {
            "proc/interrupts" => text
                .lines()
                .enumerate()
                .map(|(i, l)| {
                    if i == 0 {
                        l.to_string()
                    } else {
                        format!("{l}{EVIL}")
                    }
                })
                .collect::<Vec<_>>()
                .join("\n"),
            "proc/net/dev" => text
                .lines()
                .enumerate()
                .map(|(i, l)| {
                    if i < 2 {
                        l.to_string()
                    } else {
                        l.replacen(':', &format!("{EVIL}:"), 1)
                    }
                })
                .collect::<Vec<_>>()
                .join("\n"),
            "proc/diskstats" => text
                .lines()
                .map(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    if w.len() > 3 {
                        let name = format!("{}{EVIL}", w[2]);
                        let mut w: Vec<String> = w.iter().map(|s| s.to_string()).collect();
                        w[2] = name;
                        w.join(" ")
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n"),
            "proc/cpuinfo" => text.replace("model name\t: ", &format!("model name\t: {EVIL}")),
            _ if text.trim_end().lines().count() == 1
                && text.chars().any(|c| c.is_ascii_alphabetic()) =>
            {
                let mut chars = text.chars();
                let first = chars.next().expect("non-empty");
                format!("{first}{EVIL}{}", chars.as_str())
            }
            _ => continue,
        };
        fs::write(&f, out + "\n").expect("write");
    }
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in fs::read_dir(dir).expect("read_dir").flatten() {
        let t = e.file_type().expect("type");
        if t.is_dir() {
            walk(&e.path(), out);
        } else if t.is_file() {
            out.push(e.path());
        }
    }
}

fn perftop(args: &[&str]) -> (Vec<u8>, Vec<u8>) {
    let out = Command::new(env!("CARGO_BIN_EXE_perftop"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run perftop");
    assert!(
        out.status.success(),
        "perftop {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.stdout, out.stderr)
}

/// The first control character (other than a line break) in `bytes`, with some context.
fn first_control(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let (i, c) = text
        .char_indices()
        .find(|&(_, c)| c != '\n' && (c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)))?;
    let from = text[..i].char_indices().rev().nth(40).map_or(0, |(j, _)| j);
    Some(format!("{c:?} after {:?}", &text[from..i]))
}

#[test]
fn escape_bytes_in_every_string_field_reach_no_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture = support::fixture("intel-pstate");
    for t in ["t0", "t1"] {
        support::copy_tree(&fixture.join(t), &dir.path().join(t));
        poison(&dir.path().join(t));
    }
    let t0 = dir.path().join("t0").display().to_string();
    let t1 = dir.path().join("t1").display().to_string();
    let snap0 = dir.path().join("s0.json").display().to_string();
    let snap1 = dir.path().join("s1.json").display().to_string();
    let rec = dir.path().join("rec").display().to_string();

    let mut outputs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut run = |name: &str, args: &[&str]| {
        let (o, e) = perftop(args);
        outputs.push((format!("{name} stdout"), o));
        outputs.push((format!("{name} stderr"), e));
    };
    run(
        "batch",
        &[
            "--root", &t1, "batch", "-n", "2", "-d", "0.25", "--width", "200",
        ],
    );
    run("snapshot", &["--root", &t1, "snapshot"]);
    run("snapshot t0", &["--root", &t0, "snapshot", "-o", &snap0]);
    run("snapshot t1", &["--root", &t1, "snapshot", "-o", &snap1]);
    run("delta", &["delta", &snap0, &snap1]);
    run(
        "record",
        &["--root", &t1, "record", "-o", &rec, "-n", "3", "-d", "0.25"],
    );
    for format in ["text", "csv", "json", "openmetrics"] {
        run(
            &format!("dump {format}"),
            &["dump", &rec, "--format", format, "--width", "200"],
        );
    }

    // The escapes are in the raw sample (so the outputs had them to leak) ...
    let snap = fs::read_to_string(&snap1).expect("snapshot");
    assert!(
        snap.matches("\\u001b]0;PWN").count() > 20,
        "fixture not poisoned"
    );
    for (name, bytes) in &outputs {
        // ... and no output carries one.
        if let Some(what) = first_control(bytes) {
            panic!("{name}: control character {what}");
        }
    }
    // The hostname reached the report, made harmless.
    let batch = String::from_utf8_lossy(&outputs[0].1);
    assert!(batch.contains("?]0;PWN??[2J?31m?"), "{batch}");
}
