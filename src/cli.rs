//! Command line: the clap types and the dispatch to each run mode's home (listed in `mode`).
//!
//! Errors surface here with context (`anyhow`) and become a one-line message and exit code 1.

use crate::mode;
use crate::mode::tweak::TweakCmd;
use crate::record::service::recording_or_system;
use crate::root::Root;
use crate::text::{MAX_WIDTH, MIN_WIDTH};
use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "perftop",
    version,
    about = "One-screen Linux performance incident dashboard"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub root: RootArg,
    /// Sampling interval in seconds (0.25 .. 60).
    #[arg(short = 'd', long = "interval", default_value_t = 1.0, global = true)]
    pub interval: f64,
    #[command(flatten)]
    pub display: DisplayArgs,
    /// How much history the live view keeps in memory for pause and step-back, in seconds.
    #[arg(long, default_value_t = 600)]
    pub keep: u64,
    /// Where R (record in the dashboard) writes its recordings (default: the current
    /// directory); checked at start: it must be a directory perftop can write into.
    #[arg(long)]
    pub record_dir: Option<PathBuf>,
    /// Config file (default: $XDG_CONFIG_HOME/perftop/config.toml when it exists).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Disable every tweak (g/a/u in the dashboard, `perftop tweak set|undo`).
    #[arg(long, global = true)]
    pub read_only: bool,
    /// Tweak journal, lock and audit log directory for the dashboard (default /run/perftop).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct DisplayArgs {
    /// Theme: dark, light, high-contrast, console16, or a path to a .toml file
    /// (default: the config file's `theme`, else dark).
    #[arg(long)]
    pub theme: Option<String>,
    /// Colour depth: auto, mono, 16, 256, truecolor (auto reads NO_COLOR, COLORTERM, TERM).
    #[arg(long)]
    pub color: Option<String>,
    /// Glyphs: auto, unicode, tty (Linux console), ascii.
    #[arg(long)]
    pub glyphs: Option<String>,
    /// How far j / J jump through history (30s, 5m, 1h).
    #[arg(long, default_value = "1m")]
    pub jump: String,
}

#[derive(Args, Debug, Clone)]
pub struct RootArg {
    /// Read proc/ and sys/ under this directory instead of / (fixtures, containers).
    #[arg(long, default_value = "/", global = true)]
    pub root: PathBuf,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print one raw sample (counters and gauges) as JSON.
    Snapshot {
        /// Write to FILE instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Derived metrics between two snapshots, as JSON (the scripting contract).
    Delta { old: PathBuf, new: PathBuf },
    /// The panes as plain text, one report per interval (first report: since boot).
    Batch {
        /// Number of reports (default: run until interrupted).
        #[arg(short = 'n', long)]
        count: Option<u64>,
        /// Report width in columns (60 .. 1000).
        #[arg(long, default_value_t = 80, value_parser = parse_width)]
        width: usize,
    },
    /// Record raw samples to a file, headless (SIGTERM/SIGINT/SIGHUP stop it cleanly: a stop
    /// marker, sync, exit status 0).
    Record {
        /// Recording path; an existing recording gets a new segment (PATH.1, PATH.2, ...).
        /// Required unless --print-unit.
        #[arg(short, long, required_unless_present = "print_unit")]
        output: Option<PathBuf>,
        /// Print a systemd unit that runs this binary as an always-on recorder into
        /// /var/lib/perftop/perftop.ptrec (-d, --retain, --max-size, --config carry over), and
        /// exit.
        #[arg(long)]
        print_unit: bool,
        /// Stop after this many samples.
        #[arg(short = 'n', long, conflicts_with = "print_unit")]
        count: Option<u64>,
        /// Stop after this long (30s, 10m, 2h, 1d).
        #[arg(long, conflicts_with = "print_unit")]
        duration: Option<String>,
        /// Keep at most this much on disk (500k, 10M, 1G): segments roll over, oldest deleted.
        #[arg(long)]
        max_size: Option<String>,
        /// Delete segments older than this (2h, 7d).
        #[arg(long)]
        retain: Option<String>,
    },
    /// Derived metrics from a recording, one entry per interval.
    Dump {
        /// The recording (default: the service's, /var/lib/perftop/perftop.ptrec).
        path: Option<PathBuf>,
        /// text, csv, json (JSON Lines) or openmetrics.
        #[arg(long, default_value = "text")]
        format: String,
        /// Start time: HH:MM[:SS] (UTC), YYYY-MM-DD HH:MM[:SS], "10m ago", +5m, @UNIX.
        #[arg(long)]
        from: Option<String>,
        /// End time (same forms as --from).
        #[arg(long)]
        to: Option<String>,
        /// Only this pane: cpu, numa, hugepages, dirty, disks, softirq, nics, host, findings.
        #[arg(long)]
        pane: Option<String>,
        /// Text report width in columns (60 .. 1000).
        #[arg(long, default_value_t = 80, value_parser = parse_width)]
        width: usize,
    },
    /// What happened in a recording window: episodes, who, what is normal here, what was
    /// done, and which episode led to which.
    Explain {
        /// The recording (default: the service's, /var/lib/perftop/perftop.ptrec).
        path: Option<PathBuf>,
        /// text (80 columns), markdown, json or html.
        #[arg(long, default_value = "text")]
        format: String,
        /// Start time (same forms as dump --from; default: the first sample).
        #[arg(long)]
        from: Option<String>,
        /// End time (same forms; default: the last sample).
        #[arg(long)]
        to: Option<String>,
        /// Write the report here instead of stdout (a symbolic link there is refused).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Compare two recordings, or two windows of one: what moved beyond its noise, which
    /// findings are new or gone.
    Diff {
        /// The first recording (A).
        a: PathBuf,
        /// The second recording (B; default: A again, with --b-from/--b-to).
        b: Option<PathBuf>,
        /// A's window start (same forms as dump --from).
        #[arg(long)]
        from: Option<String>,
        /// A's window end.
        #[arg(long)]
        to: Option<String>,
        /// B's window start.
        #[arg(long)]
        b_from: Option<String>,
        /// B's window end.
        #[arg(long)]
        b_to: Option<String>,
        /// text (80 columns) or json.
        #[arg(long, default_value = "text")]
        format: String,
        /// Write the report here instead of stdout (a symbolic link there is refused).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// The dashboard over a recording: same panes, a timeline, play / step / jump.
    Replay {
        /// The recording (default: the service's, /var/lib/perftop/perftop.ptrec).
        path: Option<PathBuf>,
        /// Start here: HH:MM[:SS] (UTC), YYYY-MM-DD HH:MM[:SS], "10m ago", +5m, @UNIX.
        #[arg(long)]
        at: Option<String>,
        /// Playback speed (0.25 .. 1024; [ and ] change it).
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
        #[command(flatten)]
        display: DisplayArgs,
    },
    /// Write a window of a recording (every segment it crosses) as a standalone recording,
    /// to attach to a ticket: re-keyed at its start, markers kept, the sample before --from
    /// kept so the first interval derives as in the original.
    Cut {
        /// The recording to cut from.
        input: PathBuf,
        /// Start time (same forms as dump --from; default: the first sample).
        #[arg(long)]
        from: Option<String>,
        /// End time, inclusive (default: the last sample).
        #[arg(long)]
        to: Option<String>,
        /// The new recording; an existing one (or its PATH.N segments) only with --force.
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing OUTPUT (and delete its later segments).
        #[arg(long)]
        force: bool,
    },
    /// Copy what perftop reads into a fixture root, twice, one interval (-d) apart:
    /// DIR/t0, DIR/t1 and DIR/capture.json, to attach to a bug report.
    Capture {
        /// New or empty directory to write the capture into.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// The live feed for Prometheus: every interval's metrics and findings to a node_exporter
    /// textfile and/or on /metrics (names as `dump --format openmetrics`).
    Export {
        /// Write DIR/perftop.prom each interval (atomically: temp file, fsync, rename).
        #[arg(long, value_name = "DIR")]
        textfile: Option<PathBuf>,
        /// Serve GET /metrics on ADDR:PORT (e.g. 127.0.0.1:8427; there is no default port).
        #[arg(long, value_name = "ADDR:PORT")]
        listen: Option<String>,
        /// Stop after this many intervals (default: until SIGTERM/SIGINT).
        #[arg(short = 'n', long)]
        count: Option<u64>,
    },
    /// Safe, reversible kernel tweaks: list, set (preview, journal, rollback), undo.
    Tweak {
        #[command(subcommand)]
        cmd: TweakCmd,
    },
}

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

/// Runs the command; the exit status is 0 but for the dashboard ended by a signal (see
/// `ui::Ended`).
pub fn run(cli: Cli) -> Result<ExitCode> {
    if writes_to_stdout(&cli.command) {
        mode::stdout::check()?;
    }
    let root = Root::new(&cli.root.root);
    let config = crate::config::load(cli.config.as_deref())?;
    let dashboard = |ended: crate::ui::Ended| ExitCode::from(ended.exit_code());
    let done: Result<()> = match cli.command {
        Some(Command::Snapshot { output }) => mode::snapshot::snapshot(&root, output),
        Some(Command::Delta { old, new }) => mode::delta::delta(&old, &new, &config.findings),
        Some(Command::Batch { count, width }) => mode::batch::batch(
            &root,
            checked_interval(cli.interval)?,
            count,
            width,
            &config.findings,
        ),
        Some(Command::Export {
            textfile,
            listen,
            count,
        }) => mode::export::export(
            &root,
            &mode::export::ExportArgs {
                textfile,
                listen,
                interval: checked_interval(cli.interval)?,
                count,
            },
            &config.findings,
        ),
        Some(Command::Record {
            output,
            print_unit: true,
            max_size,
            retain,
            ..
        }) => {
            checked_interval(cli.interval)?;
            mode::record::print_unit(crate::record::service::UnitArgs {
                bin: std::env::current_exe().context("finding this binary's path")?,
                output,
                interval_s: cli.interval,
                retain,
                max_size,
                root: (cli.root.root != std::path::Path::new("/")).then_some(cli.root.root),
                config: cli.config,
            })
        }
        Some(Command::Record {
            output,
            print_unit: false,
            count,
            duration,
            max_size,
            retain,
        }) => mode::record::record(
            &root,
            &mode::record::RecordArgs {
                // clap requires -o without --print-unit; checked again rather than trusted.
                output: output.context("-o PATH is required (or --print-unit)")?,
                interval: checked_interval(cli.interval)?,
                count,
                duration,
                max_size,
                retain,
            },
        ),
        Some(Command::Dump {
            path,
            format,
            from,
            to,
            pane,
            width,
        }) => mode::dump::run(
            &recording_or_system(path)?,
            &format,
            from,
            to,
            pane,
            width,
            &config.findings,
        ),
        Some(Command::Explain {
            path,
            format,
            from,
            to,
            output,
        }) => mode::explain::run(
            &recording_or_system(path)?,
            &format,
            from,
            to,
            output.as_deref(),
            &config.findings,
        ),
        Some(Command::Diff {
            a,
            b,
            from,
            to,
            b_from,
            b_to,
            format,
            output,
        }) => mode::diff::run(
            &mode::diff::DiffArgs {
                a,
                b,
                from,
                to,
                b_from,
                b_to,
                format,
            },
            output.as_deref(),
            &config.findings,
        ),
        Some(Command::Cut {
            input,
            from,
            to,
            output,
            force,
        }) => mode::cut::run(crate::record::cut::CutArgs {
            input,
            from,
            to,
            output,
            force,
        }),
        Some(Command::Replay {
            path,
            at,
            speed,
            display,
        }) => {
            return mode::replay::run(
                recording_or_system(path)?,
                at,
                speed,
                look(display, &config)?,
            )
            .map(dashboard);
        }
        Some(Command::Capture { output }) => {
            mode::capture::capture(&root, &output, checked_interval(cli.interval)?)
        }
        Some(Command::Tweak { cmd }) => mode::tweak::run(root, cmd, cli.read_only),
        None => {
            return mode::live::run(crate::ui::Options {
                root,
                interval: checked_interval(cli.interval)?,
                keep: Duration::from_secs(cli.keep.clamp(10, 86_400)),
                look: look(cli.display, &config)?,
                record_dir: mode::live::record_dir(cli.record_dir)?,
                read_only: cli.read_only,
                state_dir: cli.state_dir,
            })
            .map(dashboard)
        }
    };
    done.map(|()| ExitCode::SUCCESS)
}

/// The commands whose result is what they print on stdout (refused when stdout is closed).
fn writes_to_stdout(c: &Option<Command>) -> bool {
    matches!(
        c,
        Some(
            Command::Snapshot { output: None }
                | Command::Delta { .. }
                | Command::Batch { .. }
                | Command::Dump { .. }
                | Command::Explain { output: None, .. }
                | Command::Diff { output: None, .. }
                | Command::Record {
                    print_unit: true,
                    ..
                }
                | Command::Tweak {
                    cmd: TweakCmd::List
                        | TweakCmd::Set { .. }
                        | TweakCmd::Undo { .. }
                        | TweakCmd::Status { .. }
                        | TweakCmd::Journal { .. }
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

/// `--width`: a number of columns in `MIN_WIDTH ..= MAX_WIDTH` (an unbounded width overflowed
/// an allocation or asked for gigabytes; below 60 the tables do not fit, and a narrower width
/// that quietly gave 60 columns was a surprise).
fn parse_width(s: &str) -> std::result::Result<usize, String> {
    let w: usize = s
        .parse()
        .map_err(|_| format!("not a number of columns: {s}"))?;
    if !(MIN_WIDTH..=MAX_WIDTH).contains(&w) {
        return Err(format!(
            "must be between {MIN_WIDTH} and {MAX_WIDTH} columns (reports need at least \
             {MIN_WIDTH}), got {w}"
        ));
    }
    Ok(w)
}

pub fn checked_interval(secs: f64) -> Result<Duration> {
    if !(0.25..=60.0).contains(&secs) {
        bail!("interval must be between 0.25 and 60 seconds, got {secs}");
    }
    Ok(Duration::from_secs_f64(secs))
}
