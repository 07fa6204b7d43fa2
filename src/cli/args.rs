//! The command line's shape: the clap types (the dashboard's own options, each command's
//! options, the shared `--root`/`-d`/`--config` groups) and the parsers of their values.

use crate::mode::tweak::TweakCmd;
use crate::text::{MAX_WIDTH, MIN_WIDTH};
use anyhow::{bail, Result};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "perftop",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("PERFTOP_BUILD"), ")"),
    about = "One-screen Linux performance incident dashboard",
    long_about = "One-screen Linux performance incident dashboard.\n\nWith no command, perftop \
        runs the live dashboard; the options below are its own. --root, -d, --config and \
        --read-only may also come before a command that uses them (perftop --root DIR batch)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Read proc/ and sys/ under this directory instead of / (fixtures, containers).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Sampling interval: seconds (0.25 .. 60) or with a unit (500ms, 2s, 1m).
    #[arg(short = 'd', long = "interval", value_name = "TIME", value_parser = parse_secs)]
    pub interval: Option<f64>,
    #[command(flatten)]
    pub display: DisplayArgs,
    /// How much history the live view keeps in memory for pause and step-back
    /// (seconds, or 10m, 2h; 10s .. 1d).
    #[arg(long, default_value = "600", value_name = "TIME", value_parser = parse_secs)]
    pub keep: f64,
    /// Where R (record in the dashboard) writes its recordings (default: the current
    /// directory); checked at start: it must be a directory perftop can write into.
    #[arg(long, value_name = "DIR")]
    pub record_dir: Option<PathBuf>,
    /// Config file (default: $XDG_CONFIG_HOME/perftop/config.toml when it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Disable every tweak (g/a/u in the dashboard, `perftop tweak set|undo`).
    #[arg(long)]
    pub read_only: bool,
    /// Tweak journal, lock and audit log directory for the dashboard (default /run/perftop).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

/// `--root`, for the commands that read the host (global: `tweak --root DIR set ...` and
/// `tweak set ... --root DIR` both work).
#[derive(Args, Debug, Clone, Default)]
pub struct HostArg {
    /// Read proc/ and sys/ under this directory instead of / (fixtures, containers).
    #[arg(long, value_name = "DIR", global = true)]
    pub root: Option<PathBuf>,
}

/// `-d`, for the commands that sample.
#[derive(Args, Debug, Clone, Default)]
pub struct IntervalArg {
    /// Sampling interval: seconds (0.25 .. 60, default 1) or with a unit (500ms, 2s, 1m).
    #[arg(short = 'd', long = "interval", value_name = "TIME", value_parser = parse_secs)]
    pub interval: Option<f64>,
}

/// `--config`, for the commands that judge findings.
#[derive(Args, Debug, Clone, Default)]
pub struct ConfigArg {
    /// Config file (default: $XDG_CONFIG_HOME/perftop/config.toml when it exists).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
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

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print one raw sample (counters and gauges) as JSON.
    Snapshot {
        /// Write to FILE instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        host: HostArg,
    },
    /// Derived metrics between two snapshots, as JSON (the scripting contract).
    Delta {
        /// The earlier snapshot (`perftop snapshot -o OLD`).
        old: PathBuf,
        /// The later snapshot.
        new: PathBuf,
        #[command(flatten)]
        config: ConfigArg,
    },
    /// The panes as plain text, one report per interval (first report: since boot).
    Batch {
        /// Number of reports (default: run until interrupted).
        #[arg(short = 'n', long)]
        count: Option<u64>,
        /// Report width in columns (60 .. 1000).
        #[arg(long, default_value_t = 80, value_parser = parse_width)]
        width: usize,
        #[command(flatten)]
        host: HostArg,
        #[command(flatten)]
        interval: IntervalArg,
        #[command(flatten)]
        config: ConfigArg,
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
        #[command(flatten)]
        host: HostArg,
        #[command(flatten)]
        interval: IntervalArg,
        #[command(flatten)]
        config: ConfigArg,
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
        /// Only this pane (csv, json, openmetrics).
        #[arg(long, value_name = "NAME", long_help = crate::pane::choices_help())]
        pane: Option<String>,
        /// Text report width in columns (60 .. 1000).
        #[arg(long, default_value_t = 80, value_parser = parse_width)]
        width: usize,
        #[command(flatten)]
        config: ConfigArg,
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
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        config: ConfigArg,
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
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        config: ConfigArg,
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
        #[command(flatten)]
        config: ConfigArg,
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
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        #[command(flatten)]
        host: HostArg,
        #[command(flatten)]
        interval: IntervalArg,
    },
    /// The dashboard of other hosts over SSH (the system `ssh`; PERFTOP_SSH overrides it):
    /// perftop copies itself to ~/.cache/perftop/ there when needed, samples there, draws here.
    /// One host: its full dashboard. Several (up to 64): the fleet screen, Enter opens one.
    Ssh {
        /// [USER@]HOST[:PORT], one or more.
        #[arg(required = true, num_args = 1..=64, value_name = "HOST")]
        hosts: Vec<String>,
        /// The remote perftop reads this directory instead of / (fixtures, demos).
        #[arg(long, value_name = "DIR")]
        remote_root: Option<String>,
        /// The remote's tweak journal, lock and audit log directory (default: its
        /// /run/perftop; for tests and demos).
        #[arg(long, value_name = "DIR")]
        remote_state_dir: Option<String>,
        /// Where R writes its recordings (here, not on the remote; default: the current
        /// directory).
        #[arg(long, value_name = "DIR")]
        record_dir: Option<PathBuf>,
        #[command(flatten)]
        interval: IntervalArg,
        #[command(flatten)]
        config: ConfigArg,
        #[command(flatten)]
        display: DisplayArgs,
    },
    /// The remote end of `perftop ssh`: samples every interval and writes the recording
    /// format's frames to stdout, until stdout or stdin is closed.
    #[command(hide = true)]
    Stream {
        #[command(flatten)]
        host: HostArg,
        #[command(flatten)]
        interval: IntervalArg,
    },
    /// The live feed for Prometheus: every interval's metrics and findings to a node_exporter
    /// textfile and/or on /metrics (names as `dump --format openmetrics`).
    Export {
        /// Write DIR/perftop.prom each interval (atomically: a new file renamed over the old).
        #[arg(long, value_name = "DIR")]
        textfile: Option<PathBuf>,
        /// Serve GET /metrics on ADDR:PORT (e.g. 127.0.0.1:8427; there is no default port).
        #[arg(long, value_name = "ADDR:PORT")]
        listen: Option<String>,
        /// Stop after this many intervals (default: until SIGTERM/SIGINT).
        #[arg(short = 'n', long)]
        count: Option<u64>,
        #[command(flatten)]
        host: HostArg,
        #[command(flatten)]
        interval: IntervalArg,
        #[command(flatten)]
        config: ConfigArg,
    },
    /// Print the man page (roff; `perftop man | man -l -`).
    Man,
    /// Print a shell completion script (bash: `perftop completions bash >
    /// /etc/bash_completion.d/perftop`).
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Safe, reversible kernel tweaks: list, set (preview, journal, rollback), undo.
    Tweak {
        #[command(subcommand)]
        cmd: TweakCmd,
        #[command(flatten)]
        host: HostArg,
        /// Disable every change (set and undo refuse; list says why).
        #[arg(long, global = true)]
        read_only: bool,
    },
}

/// `--width`: a number of columns in `MIN_WIDTH ..= MAX_WIDTH` (an unbounded width overflowed
/// an allocation or asked for gigabytes; below 60 the tables do not fit, and a narrower width
/// that quietly gave 60 columns was a surprise).
pub(super) fn parse_width(s: &str) -> std::result::Result<usize, String> {
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

/// A time in seconds: a bare number (`0.5`, `600`) or with a unit (`500ms`, `2s`, `10m`, `1h`),
/// for every option that takes a time (`-d`, `--keep`), as `--jump` and `--duration` do.
pub(super) fn parse_secs(s: &str) -> std::result::Result<f64, String> {
    if let Ok(v) = s.trim().parse::<f64>() {
        return if v.is_finite() {
            Ok(v)
        } else {
            Err(format!("not a time: {s}"))
        };
    }
    crate::record::parse_duration(s)
        .map(|d| d.as_secs_f64())
        .map_err(|_| format!("not a time: {s} (seconds, or 500ms, 2s, 10m, 1h)"))
}

pub fn checked_interval(secs: f64) -> Result<Duration> {
    if !(0.25..=60.0).contains(&secs) {
        bail!("interval must be between 0.25 and 60 seconds, got {secs}");
    }
    Ok(Duration::from_secs_f64(secs))
}
