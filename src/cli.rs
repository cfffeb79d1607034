//! The command line: `run`, `validate` and `loadgen`. The only module that wires config, plan,
//! runtime and signals together; everything it calls returns typed errors, which `main` prints.

use crate::loadgen::LoadgenArgs;
use crate::runtime::{self, RunOptions};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
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
    /// Run a job until its bounded inputs end, or until SIGINT/SIGTERM.
    Run {
        #[arg(long)]
        config: PathBuf,
        /// Also write the run summary (events/s, latency percentiles, per-shard time) as JSON here.
        #[arg(long)]
        stats: Option<PathBuf>,
        /// Read files with plain reads instead of io_uring.
        #[arg(long)]
        no_uring: bool,
    },
    /// Check a config and print the plan summary; runs nothing and writes nothing.
    Validate {
        #[arg(long)]
        config: PathBuf,
    },
    /// Write synthetic test data (the generator source's model) to NDJSON files.
    Loadgen(LoadgenArgs),
    /// List the checkpoints in a `[checkpoint] dir`: id, time, position, sizes, per-shard key groups.
    Inspect {
        /// The checkpoint directory.
        dir: PathBuf,
    },
}

pub fn main_with(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Validate { config } => {
            let plan = crate::plan::load(&config)?;
            println!(
                "{}: ok ({} sources, {} windows, {} sinks, {} shards)",
                config.display(),
                plan.sources.len(),
                plan.windows.len(),
                plan.sinks.len(),
                plan.runtime.shards
            );
            Ok(())
        }
        Command::Run {
            config,
            stats,
            no_uring,
        } => {
            let plan = crate::plan::load(&config)?;
            let stop = Arc::new(AtomicBool::new(false));
            for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
                // A second signal while draining exits at once.
                signal_hook::flag::register_conditional_shutdown(sig, 1, stop.clone())?;
                signal_hook::flag::register(sig, stop.clone())?;
            }
            let summary = runtime::run(
                &plan,
                RunOptions {
                    stop,
                    uring: !no_uring,
                    partitions: None,
                },
            )?;
            eprint!("{}", summary.text());
            if let Some(path) = stats {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::write(&path, serde_json::to_vec_pretty(&summary)?)?;
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
