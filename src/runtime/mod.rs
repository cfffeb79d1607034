//! The runtime: runs a [`Plan`] on N pinned shard threads that share nothing but SPSC rings.
//!
//! Key -> hash -> key group (`key_groups` of them, fixed for the life of the state) -> shard: shard `i`
//! owns a contiguous range of key groups and all state for them. `run` builds everything a shard needs
//! before any thread starts (so a bad source or sink fails first), starts the shards, waits for them
//! and merges their counters. It knows operators, sources and sinks only through their traits.

pub mod aligned;
mod checkpointing;
mod kafka_positions;
pub mod ring;
pub mod schedule;
mod setup;
mod shard;
mod wiring;

use crate::metrics::{latency_histogram, RunSummary, ShardStats};
use crate::operators::record::RecordChain;
use crate::plan::{Plan, SinkKind, SourceKind, StreamRef};
use crate::sinks::{SharedSink, SinkError};
use crate::sources::generator::GenParser;
use crate::sources::record::RecordParser;
use crate::sources::{PartKind, Partition, SourceError};
use schedule::{ChunkOrder, Schedule};
use setup::{Routes, ShardSetup, StopCoord};
use shard::{Shard, ShardParts, SourceParser};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;
use wiring::Wiring;

/// What a shard says when it stops because another one failed.
pub(crate) const SECONDARY_FAILURE: &str = "stopped because another shard failed";

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Sink(#[from] SinkError),
    #[error("window `{window}`: {message}")]
    Setup { window: String, message: String },
    #[error("shard {shard} failed: {message}")]
    Shard { shard: usize, message: String },
    #[error("checkpoint: {0}")]
    Checkpoint(String),
}

pub struct RunOptions {
    /// Set by SIGINT/SIGTERM: stop reading, finish what is in flight, flush, return.
    pub stop: Arc<AtomicBool>,
    /// Read files through io_uring (falls back to pread if the kernel refuses).
    pub uring: bool,
    /// Replace the plan's sources by these partitions (benchmarks on pre-parsed events).
    pub partitions: Option<Vec<Partition>>,
    /// Set by SIGUSR1: take a savepoint now and keep running (needs `[checkpoint]`).
    pub savepoint: Arc<AtomicBool>,
    /// Restore from this savepoint instead of the newest checkpoint.
    pub from_savepoint: Option<std::path::PathBuf>,
    /// Restore even if state of windows this config no longer has (or redefines) is dropped.
    pub allow_dropped_state: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            stop: Arc::new(AtomicBool::new(false)),
            uring: true,
            partitions: None,
            savepoint: Arc::new(AtomicBool::new(false)),
            from_savepoint: None,
            allow_dropped_state: false,
        }
    }
}

pub fn run(plan: &Plan, mut opts: RunOptions) -> Result<RunSummary, RuntimeError> {
    let parts = match opts.partitions.take() {
        Some(p) => p,
        None => crate::sources::partitions(plan)?,
    };
    let staged: Vec<std::path::PathBuf> = match plan.checkpoint {
        Some(_) => plan
            .sinks
            .iter()
            .filter_map(|s| match &s.kind {
                SinkKind::File { path } => Some(path.clone()),
                SinkKind::Stdout | SinkKind::Kafka(_) => None,
            })
            .collect(),
        None => Vec::new(),
    };
    let (ckpt, resume, jobs) = match &plan.checkpoint {
        Some(c) => {
            let args = checkpointing::OpenArgs {
                key_groups: plan.runtime.key_groups.max(1),
                parts: &parts,
                staged,
                kafka: kafka_committers(plan, &c.dir),
                operators: plan.operators(),
                from_savepoint: opts.from_savepoint.as_deref(),
                allow_dropped_state: opts.allow_dropped_state,
                savepoint_requested: opts.savepoint.clone(),
            };
            let (ckpt, resume, jobs) = checkpointing::open(c, args)?;
            (Some(ckpt), resume.map(Arc::new), Some(jobs))
        }
        None if opts.from_savepoint.is_some() => {
            return Err(RuntimeError::Checkpoint(
                "--from-savepoint needs a [checkpoint] section: the restored job checkpoints                  into its dir"
                    .into(),
            ))
        }
        None => (None, None, None),
    };
    // Whatever happens from here, the writer is stopped and the checkpoint dir released.
    let result = run_shards(plan, opts, parts, ckpt.clone(), resume, jobs);
    if let Some(ck) = &ckpt {
        ck.close();
        crate::checkpoint::control::release(&ck.dir);
    }
    result
}

/// Where the shards stage an exactly-once Kafka sink's lines: inside the checkpoint directory.
fn kafka_stage(dir: &std::path::Path, sink: &str) -> std::path::PathBuf {
    dir.join("kafka-staging").join(sink)
}

/// The committers of the exactly-once Kafka sinks (run by the checkpoint writer).
fn kafka_committers(
    plan: &Plan,
    dir: &std::path::Path,
) -> Vec<Arc<crate::sinks::kafka::KafkaCommitter>> {
    plan.sinks
        .iter()
        .filter_map(|s| match &s.kind {
            SinkKind::Kafka(k) if k.exactly_once => Some(Arc::new(
                crate::sinks::kafka::KafkaCommitter::new(&s.name, k, kafka_stage(dir, &s.name)),
            )),
            _ => None,
        })
        .collect()
}

/// Continues the chunk order a checkpoint recorded (after its watermarks in the `time` section),
/// before any shard asks it for a chunk.
fn restore_order(
    order: &ChunkOrder,
    tracker_init: &[(i64, bool)],
    r: &checkpointing::Resume,
) -> Result<(), RuntimeError> {
    let fail = |m: String| RuntimeError::Checkpoint(format!("checkpoint {}: {m}", r.id));
    let time = r
        .snapshots
        .first()
        .and_then(|s| s.sections.iter().find(|x| x.name == "time"))
        .ok_or_else(|| fail("no watermark state".into()))?;
    let mut d = crate::checkpoint::codec::Dec::new(&time.bytes);
    crate::time::WatermarkTracker::new(tracker_init)
        .decode(&mut d)
        .map_err(fail)?;
    d.i64("watermark").map_err(fail)?;
    order.decode(&mut d).map_err(fail)
}

fn run_shards(
    plan: &Plan,
    opts: RunOptions,
    parts: Vec<Partition>,
    ckpt: Option<Arc<checkpointing::Ckpt>>,
    resume: Option<Arc<checkpointing::Resume>>,
    jobs: Option<std::sync::mpsc::Receiver<checkpointing::Job>>,
) -> Result<RunSummary, RuntimeError> {
    let n = plan.runtime.shards.max(1);
    let first_id = ckpt.as_ref().map_or(0, |c| c.base_id + 1);
    let mut parts = parts;
    let kafka_job = parts.iter().any(|p| matches!(p.kind, PartKind::Kafka(_)));
    if let (true, Some(r)) = (kafka_job, &resume) {
        kafka_positions::restore(&mut parts, r)?;
    }
    let mut chunk_counts: Vec<_> = parts
        .iter()
        .map(|p| p.chunks(plan.runtime.chunk_bytes))
        .collect();
    if kafka_job {
        // Every Kafka partition gets a chunk in every round (bounded ones run empty once done),
        // so the padded order stays a plain function of the sequence number.
        let common = chunk_counts
            .iter()
            .try_fold(0u64, |m, c| c.map(|c| m.max(c)));
        chunk_counts.iter_mut().for_each(|c| *c = common);
    }
    let aligned = parts
        .iter()
        .any(|p| plan.sources[p.source].watermark.max_drift_ms.is_some());
    let schedule = if kafka_job {
        let parts_n = parts.len() as u64;
        ChunkOrder::Padded {
            parts: parts_n,
            round: parts_n.div_ceil(n as u64).max(1) * n as u64,
            count: chunk_counts.first().copied().flatten(),
        }
    } else if aligned {
        ChunkOrder::Aligned(aligned::AlignedOrder::new(
            parts
                .iter()
                .zip(&chunk_counts)
                .map(|(p, &chunks)| aligned::AlignedPart {
                    chunks,
                    max_out_of_orderness_ms: p.max_out_of_orderness_ms,
                    max_drift_ms: plan.sources[p.source].watermark.max_drift_ms,
                })
                .collect(),
            n,
        ))
    } else {
        ChunkOrder::Fixed(Schedule::new(&chunk_counts))
    };

    let Wiring {
        agg_slots,
        bindings,
        chains,
        n_ops,
    } = wiring::wire(plan)?;
    let memory = parts
        .iter()
        .any(|p| matches!(p.kind, PartKind::Memory { .. }));
    let make_parsers = || -> Result<Vec<SourceParser>, RuntimeError> {
        plan.sources
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let err = |message| RuntimeError::Setup {
                    window: format!("(source {})", s.name),
                    message,
                };
                if memory {
                    return Ok(SourceParser::Memory);
                }
                Ok(match &s.kind {
                    SourceKind::File { .. } => SourceParser::Json(
                        RecordParser::new(&s.event_time.field, s.event_time.unit, &bindings[i])
                            .map_err(err)?
                            .with_guard(s.event_time.max_future_ms, s.event_time.allow_negative),
                    ),
                    SourceKind::Generator(_) => {
                        SourceParser::Gen(GenParser::new(&bindings[i]).map_err(err)?)
                    }
                    SourceKind::Kafka(k) if k.kafka_timestamp => SourceParser::Json(
                        RecordParser::keyed(&bindings[i])
                            .map_err(err)?
                            .with_guard(s.event_time.max_future_ms, s.event_time.allow_negative),
                    ),
                    SourceKind::Kafka(_) => SourceParser::Json(
                        RecordParser::new(&s.event_time.field, s.event_time.unit, &bindings[i])
                            .map_err(err)?
                            .with_guard(s.event_time.max_future_ms, s.event_time.allow_negative),
                    ),
                })
            })
            .collect()
    };
    let make_routes = || -> Result<Vec<Vec<shard::records::Route>>, RuntimeError> {
        chains
            .iter()
            .map(|specs| {
                specs
                    .iter()
                    .filter(|_| !memory)
                    .map(|(chain, binds, sinks)| {
                        let err = |message| RuntimeError::Setup {
                            window: "(filters and selects)".into(),
                            message,
                        };
                        Ok(shard::records::Route {
                            chain: RecordChain::new(&plan.stages, chain).map_err(err)?,
                            parser: match binds.is_empty() {
                                true => None,
                                false => Some(RecordParser::keyed(binds).map_err(err)?),
                            },
                            sinks: sinks.clone(),
                        })
                    })
                    .collect()
            })
            .collect()
    };
    // Per window: the distinct chains over its results, and the sinks of each.
    let mut result_specs: Vec<Vec<(Vec<crate::plan::StageId>, Vec<usize>)>> =
        vec![Vec::new(); n_ops];
    for (si, s) in plan.sinks.iter().enumerate() {
        for (op, chain) in &s.results_via {
            let specs = &mut result_specs[*op];
            match specs.iter_mut().find(|(c, _)| c == chain) {
                Some((_, sinks)) => sinks.push(si),
                None => specs.push((chain.clone(), vec![si])),
            }
        }
    }
    let make_result_chains = || -> Result<shard::ResultChains, RuntimeError> {
        result_specs
            .iter()
            .map(|specs| {
                specs
                    .iter()
                    .map(|(chain, sinks)| {
                        let c = RecordChain::new(&plan.stages, chain).map_err(|message| {
                            RuntimeError::Setup {
                                window: "(filters and selects)".into(),
                                message,
                            }
                        })?;
                        Ok((c, sinks.clone()))
                    })
                    .collect()
            })
            .collect()
    };
    make_parsers()?; // fail before any thread starts
    make_routes()?;
    make_result_chains()?;

    // Sinks and routes.
    let mut shared = Vec::new();
    for s in &plan.sinks {
        shared.push(match &s.kind {
            SinkKind::File { path } if ckpt.is_some() => {
                SharedSink::staged(&s.name, path, resume.is_some())?
            }
            SinkKind::File { path } => SharedSink::file(&s.name, path, resume.is_some())?,
            SinkKind::Stdout => SharedSink::stdout(&s.name),
            SinkKind::Kafka(k) if k.exactly_once => match &plan.checkpoint {
                Some(c) => SharedSink::staged_only(&s.name, &kafka_stage(&c.dir, &s.name)),
                None => {
                    return Err(RuntimeError::Setup {
                        window: format!("(sink {})", s.name),
                        message: "exactly_once needs [checkpoint]".into(),
                    })
                }
            },
            SinkKind::Kafka(k) => SharedSink::kafka(&s.name, k, n)?,
        });
    }
    let mut routes = Routes {
        results: vec![Vec::new(); n_ops],
        late: vec![Vec::new(); n_ops],
    };
    for (si, s) in plan.sinks.iter().enumerate() {
        for input in &s.inputs {
            match *input {
                StreamRef::Window(op) => routes.results[op].push(si),
                StreamRef::Late(op) => routes.late[op].push(si),
            }
        }
    }
    let dead = match &plan.dead_letter {
        Some(path) => Some(SharedSink::file("dead_letter", path, resume.is_some())?),
        None => None,
    };

    let parts = Arc::new(parts);
    let failed = Arc::new(AtomicBool::new(false));
    // The endpoint binds before any shard starts: a taken address fails the run at once.
    let op_names: Vec<String> = plan.operators().into_iter().map(|(n, _)| n).collect();
    let (live, server) = match plan.api {
        Some(addr) => {
            let server = crate::api::Server::bind(addr).map_err(|e| RuntimeError::Setup {
                window: "(api)".into(),
                message: format!("cannot listen on {addr}: {e}"),
            })?;
            let mut live = crate::metrics::live::Live::new(n, op_names.clone());
            live.source_names = plan.sources.iter().map(|s| s.name.clone()).collect();
            live.partition_names = parts.iter().map(|p| p.name.clone()).collect();
            let kparts: Vec<_> = parts
                .iter()
                .enumerate()
                .filter_map(|(i, p)| match (&p.kind, &plan.sources[p.source].kind) {
                    (PartKind::Kafka(k), SourceKind::Kafka(kp)) => Some((i as u16, kp, k)),
                    _ => None,
                })
                .collect();
            if !kparts.is_empty() {
                live.kafka = Some(crate::sources::kafka::HighWatch::new(&kparts).map_err(
                    |message| RuntimeError::Setup {
                        window: "(api)".into(),
                        message,
                    },
                )?);
            }
            let live = Arc::new(live);
            (Some(live), Some(server))
        }
        None => (None, None),
    };
    let tracker_init: Vec<(i64, bool)> = parts
        .iter()
        .zip(&chunk_counts)
        .map(|(p, c)| (p.max_out_of_orderness_ms, *c != Some(0)))
        .collect();
    if let Some(r) = &resume {
        restore_order(&schedule, &tracker_init, r)?;
    }
    let setup = Arc::new(ShardSetup {
        shards: n,
        key_groups: plan.runtime.key_groups.max(1),
        chunk_bytes: plan.runtime.chunk_bytes.max(1),
        max_line_bytes: plan.runtime.max_line_bytes,
        uring: opts.uring,
        tracker_init,
        parts: parts.clone(),
        chunk_counts,
        schedule,
        sources: plan.sources.iter().map(|s| s.name.clone()).collect(),
        backfill: plan.sources.iter().map(|s| s.backfill).collect(),
        kafka_timestamp: plan
            .sources
            .iter()
            .map(|s| matches!(&s.kind, SourceKind::Kafka(k) if k.kafka_timestamp))
            .collect(),
        idle_ms: plan
            .sources
            .iter()
            .map(|s| s.watermark.idle_timeout_ms)
            .collect(),
        kafka_job,
        routes: Arc::new(routes),
        stop: StopCoord {
            requested: opts.stop.clone(),
            failed,
            ..StopCoord::default()
        },
        epoch: Instant::now(),
        op_names,
        ckpt: ckpt.clone(),
        live: live.clone(),
        resume,
    });

    // Rings: one per ordered pair of shards. A shard's ring to itself holds the events it routed to
    // itself until their chunk's turn comes: the same credit and the same receive path as any other.
    let mut outs: Vec<Vec<Option<ring::Producer<crate::event::Event>>>> =
        (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
    let mut ins: Vec<Vec<Option<ring::Consumer<crate::event::Event>>>> =
        (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
    for (from, out) in outs.iter_mut().enumerate() {
        for (to, slot) in out.iter_mut().enumerate() {
            let (p, c) = ring::ring(plan.runtime.ring_capacity);
            *slot = Some(p);
            ins[to][from] = Some(c);
        }
    }

    let cores = if plan.runtime.pin_cores {
        core_affinity::get_core_ids().unwrap_or_default()
    } else {
        Vec::new()
    };
    let writer = match (&ckpt, jobs) {
        (Some(ck), Some(rx)) => Some(
            checkpointing::spawn_writer(ck.clone(), rx, setup.stop.failed.clone(), live.clone())
                .map_err(|e| {
                    RuntimeError::Checkpoint(format!("cannot start the checkpoint writer: {e}"))
                })?,
        ),
        _ => None,
    };
    tracing::info!(
        shards = n,
        sources = plan.sources.len(),
        operators = n_ops,
        "job started"
    );
    let start = Instant::now();
    let mut handles = Vec::new();
    for (id, (out, inbound)) in outs.into_iter().zip(ins).enumerate() {
        let ops = wiring::operators(plan, &agg_slots, &parts);
        let parts_for = ShardParts {
            parsers: make_parsers()?,
            routes: make_routes()?,
            result_chains: make_result_chains()?,
            out,
            inbound,
            ops,
            sinks: shared.iter().map(|s| s.writer(id, first_id)).collect(),
            dead: dead.as_ref().map(|s| s.writer(id, first_id)),
            kafka: kafka_positions::reader(plan, &parts, id, n)?,
            hot: shard::hot::PhaseOne::new(plan, &agg_slots, id, n),
        };
        let setup = setup.clone();
        let core = if cores.is_empty() {
            None
        } else {
            Some(cores[id % cores.len()])
        };
        let handle = std::thread::Builder::new()
            .name(format!("sluice-shard-{id}"))
            .spawn(move || {
                if let Some(c) = core {
                    if !core_affinity::set_for_current(c) && id == 0 {
                        tracing::warn!("pinning shard threads to cores was refused; running unpinned");
                    }
                }
                let (mut shard, refused) = Shard::new(id, setup, parts_for);
                if let (Some(why), 0) = (refused, id) {
                    tracing::warn!(reason = %why, "io_uring unavailable; file sources fall back to pread");
                }
                let res = shard.run();
                (res, shard.stats.clone(), shard.hist.clone())
            })
            .map_err(|e| RuntimeError::Shard {
                shard: id,
                message: format!("cannot start thread: {e}"),
            })?;
        handles.push(handle);
    }
    let api_stop = Arc::new(AtomicBool::new(false));
    let api =
        match (server, &live) {
            (Some(server), Some(live)) => {
                live.ready.store(true, std::sync::atomic::Ordering::Release);
                Some(server.spawn(live.clone(), api_stop.clone()).map_err(|e| {
                    RuntimeError::Setup {
                        window: "(api)".into(),
                        message: format!("cannot start the endpoint: {e}"),
                    }
                })?)
            }
            _ => None,
        };
    let mut stats: Vec<ShardStats> = Vec::new();
    let mut hist = latency_histogram();
    // A failing shard makes the others stop with a secondary error; report the cause.
    let mut errors: Vec<(bool, RuntimeError)> = Vec::new();
    for (id, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok((res, s, hh)) => {
                if let Err(message) = res {
                    let secondary = message == SECONDARY_FAILURE;
                    errors.push((secondary, RuntimeError::Shard { shard: id, message }));
                }
                stats.push(s);
                let _ = hist.add(&hh);
            }
            Err(_) => errors.push((
                false,
                RuntimeError::Shard {
                    shard: id,
                    message: "panicked".into(),
                },
            )),
        }
    }
    // The endpoint's shutdown is not part of the run's time.
    let api_started = Instant::now();
    api_stop.store(true, std::sync::atomic::Ordering::Release);
    if let Some(h) = api {
        let _ = h.join();
    }
    let api_shutdown = api_started.elapsed();
    // Every shard has handed over its last checkpoint part: let the writer finish them.
    if let (Some(ck), Some(w)) = (&ckpt, writer) {
        ck.close();
        if w.join().is_err() {
            ck.fail("the checkpoint writer panicked".into());
        }
        if let Some(why) = ck.error() {
            return Err(RuntimeError::Checkpoint(why));
        }
    }
    errors.sort_by_key(|(secondary, _)| *secondary);
    if let Some((_, e)) = errors.into_iter().next() {
        return Err(e);
    }
    let stopped = opts.stop.load(std::sync::atomic::Ordering::Relaxed);
    tracing::info!(
        stopped_by_signal = stopped,
        seconds = start.elapsed().as_secs_f64(),
        "job ended"
    );
    let mut summary = RunSummary::new(
        &stats,
        &hist,
        start.elapsed().saturating_sub(api_shutdown),
        stopped,
    );
    summary.set_joins(&setup.op_names, &stats);
    summary.set_hot_keys(&setup.op_names, &stats);
    summary.alignment_paused_rounds = setup.schedule.paused();
    if let Some(ck) = &ckpt {
        summary.set_checkpoints(ck.metrics());
    }
    Ok(summary)
}
