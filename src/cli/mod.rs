//! Command line: parsing (the clap types are in `args`) and the dispatch to each run mode's home (listed in `mode`).
//!
//! Errors surface here with context (`anyhow`) and become a one-line message and exit code 1.

pub mod args;

pub use args::{checked_interval, Cli, Command, ConfigArg, DisplayArgs, HostArg, IntervalArg};

use crate::mode;
use crate::mode::tweak::TweakCmd;
use crate::record::service::recording_or_system;
use crate::root::Root;
use anyhow::{bail, Context, Result};
use clap::{CommandFactory, Parser};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            // A closed pipe (perftop batch | head) is not an error worth a message.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("perftop: {}", crate::safe::text(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// What a command takes of the options that may also come before it (`perftop --root DIR
/// batch`): its own value, else the one before it. An option given before a command that does
/// not use it is an error, never silently ignored (`perftop --root /x dump` read no /x).
struct Before {
    command: &'static str,
    root: Option<PathBuf>,
    interval: Option<f64>,
    config: Option<PathBuf>,
    read_only: bool,
}

impl Before {
    fn root(&mut self, own: HostArg) -> Root {
        Root::new(own.root.or(self.root.take()).unwrap_or_else(|| "/".into()))
    }

    fn interval(&mut self, own: IntervalArg) -> Result<Duration> {
        checked_interval(own.interval.or(self.interval.take()).unwrap_or(1.0))
    }

    fn config(&mut self, own: ConfigArg) -> Result<crate::config::Config> {
        crate::config::load(own.config.or(self.config.take()).as_deref())
    }

    /// Refuses what was given before the command and not taken by it.
    fn all_taken(&self) -> Result<()> {
        let unused = [
            ("--root", self.root.is_some()),
            ("-d/--interval", self.interval.is_some()),
            ("--config", self.config.is_some()),
            ("--read-only", self.read_only),
        ];
        for (flag, given) in unused {
            if given {
                bail!(
                    "{flag} does not apply to `perftop {}` (see perftop {} --help)",
                    self.command,
                    self.command
                );
            }
        }
        Ok(())
    }
}

/// Runs the command; the exit status is 0 but for the dashboard ended by a signal (see
/// `ui::Ended`).
pub fn run(cli: Cli) -> Result<ExitCode> {
    if writes_to_stdout(&cli.command) {
        mode::stdout::check()?;
    }
    let mut before = Before {
        command: cli.command.as_ref().map_or("", Command::name),
        root: cli.root,
        interval: cli.interval,
        config: cli.config,
        read_only: cli.read_only,
    };
    let Some(command) = cli.command else {
        let root = before.root(HostArg::default());
        let interval = before.interval(IntervalArg::default())?;
        let config = before.config(ConfigArg::default())?;
        return mode::live::run(crate::ui::Options {
            root,
            interval,
            keep: Duration::from_secs_f64(cli.keep.clamp(10.0, 86_400.0)),
            look: look(cli.display, &config)?,
            record_dir: mode::live::record_dir(cli.record_dir)?,
            read_only: cli.read_only,
            state_dir: cli.state_dir,
        })
        .map(|ended| ExitCode::from(ended.exit_code()));
    };
    if dashboard_only(&cli.record_dir, &cli.state_dir, cli.keep, &cli.display) {
        bail!(
            "--record-dir, --state-dir, --keep and the display options before a command are \
             the live dashboard's; `perftop {}` does not take them there",
            before.command
        );
    }
    dispatch(command, &mut before)
}

/// Whether a dashboard-only option was given before a command (`perftop --theme light dump`
/// drew nothing in that theme; `replay` takes its display options after its name).
fn dashboard_only(
    record_dir: &Option<PathBuf>,
    state_dir: &Option<PathBuf>,
    keep: f64,
    d: &DisplayArgs,
) -> bool {
    record_dir.is_some()
        || state_dir.is_some()
        || keep != 600.0
        || d.theme.is_some()
        || d.color.is_some()
        || d.glyphs.is_some()
        || d.jump != "1m"
}

fn dispatch(command: Command, before: &mut Before) -> Result<ExitCode> {
    let done: Result<()> = match command {
        Command::Snapshot { output, host } => {
            let root = before.root(host);
            before.all_taken()?;
            mode::snapshot::snapshot(&root, output)
        }
        Command::Delta { old, new, config } => {
            let config = before.config(config)?;
            before.all_taken()?;
            mode::delta::delta(&old, &new, &config.findings)
        }
        Command::Batch {
            count,
            width,
            host,
            interval,
            config,
        } => {
            let (root, interval) = (before.root(host), before.interval(interval)?);
            let config = before.config(config)?;
            before.all_taken()?;
            mode::batch::batch(&root, interval, count, width, &config.findings)
        }
        Command::Export {
            textfile,
            listen,
            count,
            host,
            interval,
            config,
        } => {
            let (root, interval) = (before.root(host), before.interval(interval)?);
            let config = before.config(config)?;
            before.all_taken()?;
            let args = mode::export::ExportArgs {
                textfile,
                listen,
                interval,
                count,
            };
            mode::export::export(&root, &args, &config.findings)
        }
        Command::Record {
            output,
            print_unit: true,
            max_size,
            retain,
            host,
            interval,
            config,
            ..
        } => {
            let interval = before.interval(interval)?;
            let root = host.root.or(before.root.take());
            let config = config.config.or(before.config.take());
            before.all_taken()?;
            // The recorder the unit starts reads this config: a bad one fails here, now.
            crate::config::load(config.as_deref())?;
            mode::record::print_unit(crate::record::service::UnitArgs {
                bin: std::env::current_exe().context("finding this binary's path")?,
                output,
                interval_s: interval.as_secs_f64(),
                retain,
                max_size,
                root: root.filter(|r| r != std::path::Path::new("/")),
                config,
            })
        }
        Command::Record {
            output,
            print_unit: false,
            count,
            duration,
            max_size,
            retain,
            host,
            interval,
            config,
        } => {
            let (root, interval) = (before.root(host), before.interval(interval)?);
            // The recorder keeps raw samples; its config is checked (a bad one fails now, not
            // at replay), and its thresholds judge the digests (`record::digest`) that explain
            // uses only when its own thresholds are the same.
            let thresholds = before.config(config)?.findings;
            before.all_taken()?;
            mode::record::record(
                &root,
                &mode::record::RecordArgs {
                    // clap requires -o without --print-unit; checked again rather than trusted.
                    output: output.context("-o PATH is required (or --print-unit)")?,
                    interval,
                    count,
                    duration,
                    max_size,
                    retain,
                    thresholds,
                },
            )
        }
        Command::Dump {
            path,
            format,
            from,
            to,
            pane,
            width,
            config,
        } => {
            let config = before.config(config)?;
            before.all_taken()?;
            let rec = recording_or_system(path)?;
            mode::dump::run(&rec, &format, from, to, pane, width, &config.findings)
        }
        Command::Explain {
            path,
            format,
            from,
            to,
            output,
            config,
        } => {
            let config = before.config(config)?;
            before.all_taken()?;
            let rec = recording_or_system(path)?;
            let out = output.as_deref();
            mode::explain::run(&rec, &format, from, to, out, &config.findings)
        }
        Command::Diff {
            a,
            b,
            from,
            to,
            b_from,
            b_to,
            format,
            output,
            config,
        } => {
            let config = before.config(config)?;
            before.all_taken()?;
            let args = mode::diff::DiffArgs {
                a,
                b,
                from,
                to,
                b_from,
                b_to,
                format,
            };
            mode::diff::run(&args, output.as_deref(), &config.findings)
        }
        Command::Cut {
            input,
            from,
            to,
            output,
            force,
        } => {
            before.all_taken()?;
            mode::cut::run(crate::record::cut::CutArgs {
                input,
                from,
                to,
                output,
                force,
            })
        }
        Command::Replay {
            path,
            at,
            speed,
            display,
            config,
        } => {
            let config = before.config(config)?;
            before.all_taken()?;
            let rec = recording_or_system(path)?;
            return mode::replay::run(rec, at, speed, look(display, &config)?)
                .map(|ended| ExitCode::from(ended.exit_code()));
        }
        Command::Capture {
            output,
            host,
            interval,
        } => {
            let (root, interval) = (before.root(host), before.interval(interval)?);
            before.all_taken()?;
            mode::capture::capture(&root, &output, interval)
        }
        Command::Stream { host, interval } => {
            let (root, interval) = (before.root(host), before.interval(interval)?);
            before.all_taken()?;
            mode::stream::run(&root, interval)
        }
        Command::Ssh {
            hosts,
            remote_root,
            remote_state_dir,
            record_dir,
            interval,
            config,
            display,
        } => {
            let interval = before.interval(interval)?;
            let config = before.config(config)?;
            before.all_taken()?;
            let opts = mode::ssh::SshOptions {
                hosts,
                remote_root,
                remote_state_dir,
                interval,
                look: look(display, &config)?,
                record_dir: mode::live::record_dir(record_dir)?,
            };
            return mode::ssh::run(opts).map(|ended| ExitCode::from(ended.exit_code()));
        }
        Command::Man => {
            before.all_taken()?;
            mode::man::write(Cli::command(), &mut std::io::stdout().lock())
        }
        Command::Completions { shell } => {
            before.all_taken()?;
            mode::completions::write(shell, Cli::command(), &mut std::io::stdout().lock())
        }
        Command::Tweak {
            cmd,
            host,
            read_only,
        } => {
            let root = before.root(host);
            let read_only = read_only || std::mem::take(&mut before.read_only);
            before.all_taken()?;
            mode::tweak::run(root, cmd, read_only)
        }
    };
    done.map(|()| ExitCode::SUCCESS)
}

impl Command {
    /// The command's name as typed (`perftop NAME`).
    fn name(&self) -> &'static str {
        match self {
            Command::Snapshot { .. } => "snapshot",
            Command::Delta { .. } => "delta",
            Command::Batch { .. } => "batch",
            Command::Record { .. } => "record",
            Command::Dump { .. } => "dump",
            Command::Explain { .. } => "explain",
            Command::Diff { .. } => "diff",
            Command::Replay { .. } => "replay",
            Command::Cut { .. } => "cut",
            Command::Capture { .. } => "capture",
            Command::Export { .. } => "export",
            Command::Stream { .. } => "stream",
            Command::Ssh { .. } => "ssh",
            Command::Man => "man",
            Command::Completions { .. } => "completions",
            Command::Tweak { .. } => "tweak",
        }
    }
}

/// The commands whose result is what they print on stdout (refused when stdout is closed).
fn writes_to_stdout(c: &Option<Command>) -> bool {
    matches!(
        c,
        Some(
            Command::Snapshot { output: None, .. }
                | Command::Delta { .. }
                | Command::Batch { .. }
                | Command::Dump { .. }
                | Command::Explain { output: None, .. }
                | Command::Diff { output: None, .. }
                | Command::Man
                | Command::Stream { .. }
                | Command::Completions { .. }
                | Command::Record {
                    print_unit: true,
                    ..
                }
                | Command::Tweak {
                    cmd: TweakCmd::List
                        | TweakCmd::Set { .. }
                        | TweakCmd::Undo { .. }
                        | TweakCmd::Status { .. }
                        | TweakCmd::Journal { .. },
                    ..
                }
        )
    )
}

/// Display options and the config file's theme and thresholds, for the live and replay views.
fn look(d: DisplayArgs, config: &crate::config::Config) -> Result<crate::ui::Look> {
    Ok(crate::ui::Look {
        theme: d
            .theme
            .or(config.theme.clone())
            .unwrap_or_else(|| "dark".into()),
        color: d.color,
        glyphs: d.glyphs,
        thresholds: config.findings.clone(),
        jump: jump_step(&d.jump)?,
    })
}

fn jump_step(s: &str) -> Result<Duration> {
    let d = crate::record::parse_duration(s).context("--jump")?;
    if d < Duration::from_millis(250) {
        bail!("--jump must be at least 250ms, got {s}");
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> std::result::Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("perftop").chain(args.iter().copied()))
    }

    /// What `run` would refuse before starting anything: the option given before a command
    /// that does not use it.
    fn refused(args: &[&str]) -> Option<String> {
        let cli = parse(args).expect("parses");
        let command = cli.command.expect("a command");
        let mut before = Before {
            command: command.name(),
            root: cli.root,
            interval: cli.interval,
            config: cli.config,
            read_only: cli.read_only,
        };
        // Take what the command takes, as `dispatch` does, without running it.
        match command {
            Command::Snapshot { host, .. } => drop(before.root(host)),
            Command::Batch { host, interval, .. } | Command::Capture { host, interval, .. } => {
                drop(before.root(host));
                drop(before.interval(interval));
            }
            Command::Tweak { host, .. } => drop(before.root(host)),
            _ => {}
        }
        before.all_taken().err().map(|e| e.to_string())
    }

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// `--root` reaches the commands that read the host, before or after the command name,
    /// and is refused by those that read a recording (it was accepted and ignored).
    #[test]
    fn each_command_takes_only_the_options_it_uses() {
        assert!(parse(&["dump", "--root", "/x", "r"]).is_err());
        assert!(parse(&["cut", "--config", "c", "r", "-o", "o"]).is_err());
        assert!(parse(&["tweak", "list", "-d", "2"]).is_err());
        let e = refused(&["--root", "/nonexistent", "dump", "rec"]).expect("refused");
        assert!(e.contains("--root does not apply to `perftop dump`"), "{e}");
        assert!(refused(&["-d", "2", "snapshot"]).is_some());
        assert!(refused(&["--read-only", "batch"]).is_some());
        assert_eq!(refused(&["--root", "/x", "-d", "2", "batch"]), None);
        assert_eq!(refused(&["batch", "--root", "/x", "-d", "2"]), None);
        assert_eq!(refused(&["tweak", "set", "k", "v", "--root", "/x"]), None);
        assert_eq!(refused(&["tweak", "--root", "/x", "set", "k", "v"]), None);
        assert_eq!(refused(&["--root", "/x", "tweak", "list"]), None);
    }

    /// Display options before a command are the dashboard's, refused there, never ignored.
    #[test]
    fn dashboard_options_before_a_command_are_refused() {
        let given = |args: &[&str]| {
            let c = parse(args).expect("parses");
            dashboard_only(&c.record_dir, &c.state_dir, c.keep, &c.display)
        };
        assert!(given(&["--theme", "light", "dump", "r"]));
        assert!(given(&["--glyphs", "ascii", "replay", "r"]));
        assert!(given(&["--keep", "90", "batch"]));
        assert!(!given(&["replay", "r", "--glyphs", "ascii"]));
        assert!(!given(&["--root", "/x", "batch"]));
    }

    /// Every time option takes units, `--keep 10m` as `--jump 5m` did.
    #[test]
    fn times_take_units_everywhere() {
        assert_eq!(parse(&["--keep", "10m"]).expect("keep").keep, 600.0);
        assert_eq!(parse(&["--keep", "90"]).expect("keep").keep, 90.0);
        assert_eq!(parse(&["-d", "500ms"]).expect("-d").interval, Some(0.5));
        assert_eq!(
            parse(&["batch", "-d", "2s"]).ok().map(|c| c.interval),
            Some(None)
        );
        assert!(parse(&["-d", "soon"]).is_err());
        assert!(parse(&["-d", "inf"]).is_err());
    }

    /// `dump --pane`'s help lists what the error lists: both come from `pane::choices`.
    #[test]
    fn dump_pane_help_lists_what_the_error_accepts() {
        let err = crate::pane::keys_for("nope")
            .expect_err("unknown")
            .to_string();
        let help = Cli::command()
            .find_subcommand_mut("dump")
            .expect("dump")
            .render_long_help()
            .to_string();
        let choices = crate::pane::choices();
        assert!(err.contains(&choices), "{err}");
        assert!(
            help.replace('\n', " ").contains("nic, or one of host"),
            "{help}"
        );
        for name in ["procs", "pressure", "irq_queues", "findings"] {
            assert!(help.contains(name), "{name} missing from dump --help");
        }
    }
}
