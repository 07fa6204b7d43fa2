//! `perftop man`: the man page, in roff, from the clap definitions (the same as `--help`),
//! the keymap's help rows, the panes, the rule table and its thresholds' defaults.
//!
//! Everything is generated, so the page cannot list an option, key or rule that does not
//! exist; `man -l` renders it (tested).

use crate::findings::{Thresholds, RULES};
use crate::pane::PANES;
use anyhow::{Context, Result};
use std::io::Write;

/// Writes the whole page for `cli` (`Cli::command()`) to `out`.
pub fn write(cli: clap::Command, out: &mut dyn Write) -> Result<()> {
    let mut page = Vec::new();
    let man = clap_mangen::Man::new(cli.clone()).section("1");
    // clap_mangen's own subcommand list points at perftop-dump(1) and the like, which do not
    // exist: the commands are described on this page instead (`commands`).
    man.render_title(&mut page)
        .and_then(|()| man.render_name_section(&mut page))
        .and_then(|()| man.render_synopsis_section(&mut page))
        .and_then(|()| man.render_description_section(&mut page))
        .and_then(|()| man.render_options_section(&mut page))
        .context("rendering the man page")?;
    let mut s = String::from_utf8_lossy(&page).into_owned();
    s.push_str(&commands(&cli));
    s.push_str(&keys());
    s.push_str(&panes());
    s.push_str(&findings());
    s.push_str(FILES);
    out.write_all(s.as_bytes()).context("writing the man page")
}

/// Text made safe for roff: backslashes escaped, and a line never starts a request.
fn esc(s: &str) -> String {
    let s = s.replace('\\', "\\e").replace('-', "\\-");
    s.lines()
        .map(|l| {
            if l.starts_with(['.', '\'']) {
                format!("\\&{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `.TP` entries: a bold tag and its paragraph.
fn tagged(tag: &str, body: &str) -> String {
    format!(".TP\n\\fB{}\\fR\n{}\n", esc(tag), esc(body))
}

/// Each command with its usage and its own options (clap_mangen lists only their names).
fn commands(cli: &clap::Command) -> String {
    let mut s = String::from(".SH COMMANDS\n");
    for sub in cli.get_subcommands().filter(|c| c.get_name() != "help") {
        let mut sub = sub.clone().bin_name(format!("perftop {}", sub.get_name()));
        let usage = sub.render_usage().to_string();
        s.push_str(&format!(
            ".SS {}\n",
            esc(&format!("perftop {}", sub.get_name()))
        ));
        let about = sub.get_about().map(|h| h.to_string()).unwrap_or_default();
        s.push_str(&format!(
            "\\fB{}\\fR\n.br\n{}\n.PP\n",
            esc(usage.trim_start_matches("Usage: ")),
            esc(&about)
        ));
        let shown = |a: &&clap::Arg| !a.is_hide_set() && a.get_id() != "help";
        for a in sub.get_arguments().filter(shown) {
            let name = match (a.get_short(), a.get_long()) {
                (Some(c), Some(l)) => format!("-{c}, --{l}"),
                (None, Some(l)) => format!("--{l}"),
                (Some(c), None) => format!("-{c}"),
                (None, None) => a.get_id().to_string().to_uppercase(),
            };
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            s.push_str(&tagged(&name, &help));
        }
        for inner in sub.get_subcommands() {
            let about = inner.get_about().map(|h| h.to_string()).unwrap_or_default();
            s.push_str(&tagged(
                &format!("{} {}", sub.get_name(), inner.get_name()),
                &about,
            ));
        }
    }
    s
}

fn keys() -> String {
    let mut s = String::from(
        ".SH KEYS\nIn the live dashboard (keys that only replay has are listed after it).\n",
    );
    let live = crate::ui::keymap::help_rows(false);
    for (k, what) in &live {
        s.push_str(&tagged(k, what));
    }
    s.push_str(".SS Replay\n");
    for (k, what) in crate::ui::keymap::help_rows(true) {
        if !live.iter().any(|(l, w)| *l == k && *w == what) {
            s.push_str(&tagged(&k, what));
        }
    }
    s
}

fn panes() -> String {
    let mut s = String::from(".SH PANES\nUnknown values show as \\-, never 0.\n");
    for (i, p) in PANES.iter().enumerate() {
        let tag = format!("{} {} (--pane {})", i + 1, p.title(), p.name());
        s.push_str(&tagged(&tag, p.about()));
    }
    s
}

/// Each rule: its id, pane, and its thresholds' config keys with their defaults.
fn findings() -> String {
    let mut s = String::from(
        ".SH FINDINGS\nEach rule, the pane it points to, and the [findings] config keys it \
         judges by with their defaults (docs/findings.md says what each holds when).\n",
    );
    let defaults = serde_json::to_value(Thresholds::default()).unwrap_or_default();
    for r in &RULES {
        let keys: Vec<String> = r
            .thresholds
            .iter()
            .map(|k| match defaults.get(*k) {
                Some(v) => format!("{k} = {v}"),
                None => (*k).to_string(),
            })
            .collect();
        let body = if keys.is_empty() {
            format!("pane {}; no threshold", r.pane.name())
        } else {
            format!("pane {}; {}", r.pane.name(), keys.join(", "))
        };
        s.push_str(&tagged(r.id, &body));
    }
    s
}

const FILES: &str = r#".SH FILES
.TP
\fB/var/lib/perftop/perftop.ptrec\fR
The always\-on recorder's recording (perftop record \-\-print\-unit), read by dump and replay without a path.
.TP
\fB/run/perftop/\fR
The tweak journal, lock and audit log (\-\-state\-dir); root's, and refused when another user can write it.
.TP
\fB$XDG_CONFIG_HOME/perftop/config.toml\fR, \fB/etc/perftop/config.toml\fR
The config file, first found (\-\-config FILE overrides): theme and [findings] thresholds.
.SH EXIT STATUS
0 on success; 1 on an error, with a one\-line message on stderr; the dashboard ended by a signal exits 128 + the signal's number.
.SH SEE ALSO
iostat(1), mpstat(1), vmstat(8), turbostat(8), numastat(8), htop(1), atop(1)
"#;
