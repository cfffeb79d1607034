//! The command line: `run`, `validate`, `explain`, `export`, `savepoint`, `inspect`, `top` and `loadgen`. The only module that
//! wires config, plan, runtime and signals together; everything it calls returns typed errors,
//! which `main` prints.

use crate::loadgen::LoadgenArgs;
use crate::runtime::{self, RunOptions};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Debug, Parser)]
#[command(
    name = "sluice",
    version,
    about = "Thread-per-core stream processor with Flink's event-time semantics"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a job until its bounded inputs end, or until SIGINT/SIGTERM. SIGUSR1 takes a savepoint
    /// and keeps running. Resumes from the newest complete checkpoint in `[checkpoint] dir`.
    Run {
        #[arg(long)]
        config: PathBuf,
        /// Restore from this savepoint (instead of the newest checkpoint).
        #[arg(long)]
        from_savepoint: Option<PathBuf>,
        /// Run with this many shards instead of the config's `[runtime] shards` (a restore moves
        /// whole key groups to their new shards).
        #[arg(long)]
        shards: Option<usize>,
        /// Restore even if the saved state holds windows this config no longer has, or defines
        /// differently: their state is dropped.
        #[arg(long)]
        allow_dropped_state: bool,
        /// Also write the run summary (events/s, latency percentiles, per-shard time) as JSON here.
        #[arg(long)]
        stats: Option<PathBuf>,
        /// Read files with plain reads instead of io_uring.
        #[arg(long)]
        no_uring: bool,
        /// Logs (one line per state change: start, restore, checkpoint, savepoint, stop, end) as
        /// `text` or `json`, on stderr.
        #[arg(long, default_value = "text", value_parser = ["text", "json"])]
        log_format: String,
    },
    /// Check a config and print the plan summary; runs nothing and writes nothing.
    Validate {
        #[arg(long)]
        config: PathBuf,
    },
    /// Print the operator graph a config runs: sources with their event time and watermark,
    /// operators with the keys they are routed on, sinks; for a `[pipeline] sql` job, first the
    /// sources, transforms and sinks its SQL compiled to. Runs nothing.
    Explain {
        #[arg(long)]
        config: PathBuf,
    },
    /// Write a Flink 2.x job for a `[pipeline] sql` job into `--out`: its SQL (with the TOML's
    /// parallelism and checkpoint settings as SET statements, relative paths made absolute), a
    /// `run.sh` (the SQL client, or `--local` for a PyFlink mini-cluster) and a README of what
    /// changed. The job is validated first.
    Export {
        /// The engine to export to.
        #[arg(value_parser = ["flink"])]
        target: String,
        #[arg(long)]
        config: PathBuf,
        /// Folder to write into (must not exist, or be empty).
        #[arg(long)]
        out: PathBuf,
    },
    /// Write synthetic test data (the generator source's model, the ad-spend flow's three inputs,
    /// or the Nexmark benchmark's persons, auctions and bids) to NDJSON files.
    Loadgen(LoadgenArgs),
    /// Take a savepoint of the job running with this config and wait until it is written; with no
    /// job running, export the newest complete checkpoint as the savepoint.
    Savepoint {
        #[arg(long)]
        config: PathBuf,
        /// Folder to write the savepoint into (must not exist, or be empty).
        #[arg(long)]
        out: PathBuf,
        /// How long to wait for the running job, in seconds.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
    },
    /// A live view of a running job from its `[api]` endpoint: per shard events/s, busy,
    /// backpressured and idle share, watermark lag; late events, dead letters, checkpoint age.
    Top {
        #[arg(long, default_value = "127.0.0.1:9464")]
        address: String,
        /// Seconds between screens.
        #[arg(long, default_value_t = 1.0)]
        every: f64,
        /// Stop after this many screens (default: until interrupted).
        #[arg(long)]
        iterations: Option<u64>,
    },
    /// Print every Flink built-in function (Flink 2.3's documentation) with sluice's status:
    /// supported, supported with a difference, refused with the reason, or not supported yet.
    Functions {
        /// Only this family (string, temporal, arithmetic, hash, aggregate, ...).
        #[arg(long)]
        family: Option<String>,
        /// As README's Markdown table.
        #[arg(long)]
        markdown: bool,
    },
    /// List the checkpoints in a `[checkpoint] dir`: id, time, position, sizes, per-shard key groups.
    Inspect {
        /// The checkpoint directory.
        dir: PathBuf,
    },
}

/// Once a stop is asked for, the drain has `limit_ms` to finish; past it the process exits with
/// status 1 and says so (the newest complete checkpoint is still there to resume from).
fn drain_watchdog(stop: Arc<AtomicBool>, limit_ms: i64) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("sluice-drain-watchdog".into())
        .spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            std::thread::sleep(std::time::Duration::from_millis(limit_ms.max(0) as u64));
            tracing::error!(drain_timeout_ms = limit_ms, "drain did not finish in time; exiting");
            eprintln!("sluice: drain did not finish within runtime.drain_timeout ({limit_ms} ms); exiting");
            std::process::exit(1);
        })?;
    Ok(())
}

pub fn main_with(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Validate { config } => validate(&config),
        Command::Explain { config } => explain(&config),
        Command::Export {
            target: _,
            config,
            out,
        } => export(&config, &out),
        Command::Run {
            config,
            stats,
            no_uring,
            from_savepoint,
            shards,
            allow_dropped_state,
            log_format,
        } => {
            init_logs(&log_format);
            let options = RunFlags {
                no_uring,
                from_savepoint,
                shards,
                allow_dropped_state,
            };
            run_job(&config, options, stats.as_deref())
        }
        Command::Savepoint {
            config,
            out,
            timeout,
        } => savepoint(&config, &out, timeout),
        Command::Top {
            address,
            every,
            iterations,
        } => {
            let every = std::time::Duration::from_secs_f64(every.max(0.05));
            crate::top::run(&address, every, iterations)
                .map_err(|e| anyhow::anyhow!("sluice top: {address}: {e}"))
        }
        Command::Functions { family, markdown } => {
            if markdown {
                print!("{}", crate::sql::catalog::markdown());
            } else {
                print!("{}", crate::sql::catalog::text(family.as_deref()));
            }
            Ok(())
        }
        Command::Inspect { dir } => {
            print!("{}", crate::checkpoint::inspect(&dir)?);
            Ok(())
        }
        Command::Loadgen(args) => {
            let r = crate::loadgen::run(&args)?;
            eprintln!(
                "sluice loadgen: wrote {} events ({} bytes) in {:.2} s",
                r.events, r.bytes, r.seconds
            );
            Ok(())
        }
    }
}

/// `sluice validate`: the plan's shape in one line.
fn validate(config: &Path) -> anyhow::Result<()> {
    let plan = crate::plan::load(config)?;
    let count = |what: &str| plan.nodes.iter().filter(|n| n.kind.what() == what).count();
    let joins = count("interval join") + count("temporal join");
    println!(
        "{}: ok ({} sources, {} filters/selects, {} windows, {} joins, {} dedupes, {} sinks, {} shards, {} depths)",
        config.display(),
        plan.sources.len(),
        plan.steps.len(),
        count("window"),
        joins,
        count("dedupe"),
        plan.sinks.len(),
        plan.runtime.shards,
        plan.depths()
    );
    Ok(())
}

/// `sluice explain`: a SQL job's compiled tables (as TOML), then the graph.
fn explain(config: &Path) -> anyhow::Result<()> {
    let job = crate::plan::load_job(config)?;
    let plan = job.plan()?;
    if let Some(sql) = &job.sql {
        println!(
            "# {}: [pipeline] sql compiles to (as TOML)\n{}",
            config.display(),
            sql.compiled.toml().trim_end()
        );
        println!();
    }
    print!("{}", crate::plan::explain(&plan));
    Ok(())
}

/// `sluice export flink`.
fn export(config: &Path, out: &Path) -> anyhow::Result<()> {
    let job = crate::plan::load_job(config)?;
    job.plan()?;
    let done = crate::sql::export::export_flink(&job.config, config, out)?;
    println!(
        "{}: Flink job written (run it with {}/run.sh)",
        done.dir.display(),
        done.dir.display()
    );
    for c in &done.changes {
        println!("  {c}");
    }
    Ok(())
}

/// Log lines to stderr, as text or JSON (`--log-format`).
fn init_logs(format: &str) {
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(false);
    // A second init (tests running several jobs in one process) keeps the first.
    let _ = if format == "json" {
        logs.json().try_init()
    } else {
        logs.try_init()
    };
}

/// `sluice run`'s flags that change the run itself.
struct RunFlags {
    no_uring: bool,
    from_savepoint: Option<PathBuf>,
    shards: Option<usize>,
    allow_dropped_state: bool,
}

/// `sluice run`: the job until its inputs end or a signal stops it; the summary to stderr and,
/// with `--stats`, as JSON to a file.
fn run_job(config: &Path, flags: RunFlags, stats: Option<&Path>) -> anyhow::Result<()> {
    let mut plan = crate::plan::load(config)?;
    if let Some(n) = flags.shards {
        anyhow::ensure!(n >= 1, "--shards must be at least 1");
        plan.runtime.shards = n;
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal while draining exits at once.
        signal_hook::flag::register_conditional_shutdown(sig, 1, stop.clone())?;
        signal_hook::flag::register(sig, stop.clone())?;
    }
    drain_watchdog(stop.clone(), plan.runtime.drain_timeout_ms)?;
    let savepoint = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGUSR1, savepoint.clone())?;
    let summary = runtime::run(
        &plan,
        RunOptions {
            stop,
            uring: !flags.no_uring,
            sources: None,
            savepoint,
            from_savepoint: flags.from_savepoint,
            allow_dropped_state: flags.allow_dropped_state,
        },
    )?;
    eprint!("{}", summary.text());
    if let Some(path) = stats {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_vec_pretty(&summary)?)?;
    }
    Ok(())
}

/// `sluice savepoint`: asks the running job for a savepoint and waits for it.
fn savepoint(config: &Path, out: &Path, timeout: u64) -> anyhow::Result<()> {
    let plan = crate::plan::load(config)?;
    let Some(ck) = &plan.checkpoint else {
        anyhow::bail!(
            "{}: savepoints need a [checkpoint] section (its dir is where the running job \
             is found and where a restored job checkpoints)",
            config.display()
        );
    };
    let wait = std::time::Duration::from_secs(timeout);
    let msg = crate::checkpoint::savepoint::take(&ck.dir, out, wait)?;
    println!("{msg}");
    Ok(())
}
