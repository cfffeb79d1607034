//! Starting a run, step by step: the graph's topology, the sinks, the metrics endpoint, the chunk
//! order, each shard's readers, chains, outlets, rings and sink writers, then the shard threads;
//! and collecting what they report when they end. Everything that can fail does before any thread
//! starts, so a bad source, sink or address fails the run at once.

mod parts;

use parts::{endpoint, open_sinks, outlets, source_readers, OpenSinks};

use super::checkpointing::{self, Ckpt, Resume};
use super::chunks::schedule;
use super::ring::{self, Consumer, Producer};
use super::setup::{ShardSetup, StopCoord};
use super::shard::{Shard, ShardParts};
use super::topology::Topology;
use super::{positions, restore_order, RunOptions, RuntimeError};
use crate::connectors::sink::SinkWriter;
use crate::connectors::source::{OpenSource, Partition};
use crate::metrics::{latency_histogram, RunSummary, ShardStats};
use crate::operators::BuildCtx;
use crate::plan::Plan;
use crate::record::changelog::ChangelogEncoding;
use crate::record::event::Event;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

fn setup_err(what: impl Into<String>) -> impl Fn(String) -> RuntimeError {
    let what = what.into();
    move |message| RuntimeError::Setup {
        what: what.clone(),
        message,
    }
}

/// One ring per ordered pair of shards, per depth of exchange (a shard's ring to itself holds
/// what it routed to itself until that chunk's turn: the same credit and receive path as any
/// other): `outs[from][to]`, `ins[to][from]`.
struct Rings {
    outs: Vec<Vec<Option<Producer<Event>>>>,
    ins: Vec<Vec<Option<Consumer<Event>>>>,
    /// Per depth below the sources, the same again.
    deep: Vec<Mesh>,
}

/// Every shard's producers to every shard, and consumers from every shard: (outs, ins).
type Mesh = (
    Vec<Vec<Option<Producer<Event>>>>,
    Vec<Vec<Option<Consumer<Event>>>>,
);

/// Shard `id`'s ends of the rings: its producers and consumers at depth 0, then per deeper
/// depth its producers to every shard and its consumers from every shard.
type ShardRings = (
    Vec<Option<Producer<Event>>>,
    Vec<Option<Consumer<Event>>>,
    Vec<Vec<Producer<Event>>>,
    Vec<Vec<Option<Consumer<Event>>>>,
);

impl Rings {
    fn new(n: usize, capacity: usize, depths: usize) -> Rings {
        let one = || -> Mesh {
            let mut outs: Vec<Vec<Option<Producer<Event>>>> =
                (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
            let mut ins: Vec<Vec<Option<Consumer<Event>>>> =
                (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
            for (from, out) in outs.iter_mut().enumerate() {
                for (to, slot) in out.iter_mut().enumerate() {
                    let (p, c) = ring::ring(capacity);
                    *slot = Some(p);
                    ins[to][from] = Some(c);
                }
            }
            (outs, ins)
        };
        let (outs, ins) = one();
        Rings {
            outs,
            ins,
            deep: (1..depths).map(|_| one()).collect(),
        }
    }

    fn take(&mut self, id: usize) -> ShardRings {
        let out = std::mem::take(&mut self.outs[id]);
        let inbound = std::mem::take(&mut self.ins[id]);
        let mut xout = Vec::new();
        let mut xin = Vec::new();
        for (o, i) in &mut self.deep {
            xout.push(o[id].iter_mut().filter_map(Option::take).collect());
            xin.push(i[id].iter_mut().map(Option::take).collect());
        }
        (out, inbound, xout, xin)
    }
}

/// What every step of starting a run reads: the plan, its opened sources and partitions, and the
/// graph's topology.
pub(super) struct Run<'a> {
    plan: &'a Plan,
    n: usize,
    sources: &'a [Arc<dyn OpenSource>],
    parts: Arc<Vec<Partition>>,
    topo: Arc<Topology>,
}

pub(super) fn run_shards(
    plan: &Plan,
    opts: RunOptions,
    sources: &[Arc<dyn OpenSource>],
    mut parts: Vec<Partition>,
    ckpt: Option<Arc<Ckpt>>,
    resume: Option<Arc<Resume>>,
    jobs: Option<std::sync::mpsc::Receiver<checkpointing::Job>>,
) -> Result<RunSummary, RuntimeError> {
    let n = plan.runtime.shards.max(1);
    let first_id = ckpt.as_ref().map_or(0, |c| c.base_id + 1);
    if let (true, Some(r)) = (parts.iter().any(Partition::is_log), &resume) {
        positions::restore(&mut parts, r)?;
    }
    let topo = Arc::new(Topology::new(plan, &parts));
    let run = Run {
        plan,
        n,
        sources,
        parts: Arc::new(parts),
        topo,
    };
    let sinks = open_sinks(plan, ckpt.as_deref(), resume.is_some(), n)?;
    let op_names: Vec<String> = plan.nodes.iter().map(|n| n.name.clone()).collect();
    let (live, server) = endpoint(&run, &op_names, &sinks)?;
    let setup = Arc::new(shard_setup(
        &run,
        &opts,
        op_names,
        &ckpt,
        live.clone(),
        resume,
    )?);
    // Every shard's parts, made before any thread starts: whatever can fail does so now.
    let mut shard_parts = Vec::with_capacity(n);
    let mut rings = Rings::new(n, plan.runtime.ring_capacity, run.topo.depths);
    for id in 0..n {
        shard_parts.push(parts_of(
            &run, id, first_id, opts.uring, &sinks, &mut rings,
        )?);
    }
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
        operators = plan.nodes.len(),
        depths = run.topo.depths,
        "job started"
    );
    let start = Instant::now();
    let handles = spawn_shards(plan, &setup, shard_parts)?;
    let api_stop = Arc::new(AtomicBool::new(false));
    let api = start_api(server, &live, &api_stop)?;
    let (stats, hist, errors) = join_shards(handles);
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
    if let Some(e) = errors {
        return Err(e);
    }
    let elapsed = start.elapsed().saturating_sub(api_shutdown);
    Ok(summary(&setup, &opts, &ckpt, &stats, &hist, elapsed))
}

/// What every shard shares read-only: the partitions, the chunk order, the topology.
fn shard_setup(
    run: &Run<'_>,
    opts: &RunOptions,
    op_names: Vec<String>,
    ckpt: &Option<Arc<Ckpt>>,
    live: Option<Arc<crate::metrics::live::Live>>,
    resume: Option<Arc<Resume>>,
) -> Result<ShardSetup, RuntimeError> {
    let plan = run.plan;
    let (chunk_counts, schedule, log_job, log_align) = schedule(plan, &run.parts, run.n);
    // A partition with nothing to read (an empty file, a bounded log whose start is its end) is
    // finished from the start, as Flink's finished split, and never holds the watermark back;
    // its own chunk count says so, not the padded count of the chunk order.
    let tracker_init: Vec<(i64, bool)> = run
        .parts
        .iter()
        .map(|p| {
            let live = p.chunks(plan.runtime.chunk_bytes) != Some(0);
            (p.max_out_of_orderness_ms, live)
        })
        .collect();
    if let Some(r) = &resume {
        restore_order(&schedule, &tracker_init, r)?;
    }
    Ok(ShardSetup {
        shards: run.n,
        key_groups: plan.runtime.key_groups.max(1),
        chunk_bytes: plan.runtime.chunk_bytes.max(1),
        tracker_init,
        parts: run.parts.clone(),
        chunk_counts,
        schedule,
        sources: plan.sources.iter().map(|s| s.name.clone()).collect(),
        rates: plan.sources.iter().map(|s| s.source.rate_limit()).collect(),
        log_job,
        log_align,
        topo: run.topo.clone(),
        stop: StopCoord {
            requested: opts.stop.clone(),
            failed: Arc::new(AtomicBool::new(false)),
            ..StopCoord::default()
        },
        epoch: Instant::now(),
        op_names,
        ckpt: ckpt.clone(),
        live,
        resume,
    })
}

/// Shard `id`'s readers, chains, operators, outlets, rings and sink writers.
fn parts_of(
    run: &Run<'_>,
    id: usize,
    first_id: u64,
    uring: bool,
    sinks: &OpenSinks,
    rings: &mut Rings,
) -> Result<ShardParts, RuntimeError> {
    let plan = run.plan;
    let (outputs, lates) = outlets(plan, &run.topo)?;
    let (readers, chains) = source_readers(run, id, uring)?;
    let (out, inbound, xout, xin) = rings.take(id);
    Ok(ShardParts {
        readers,
        recallers: run.sources.iter().map(|s| s.recaller()).collect(),
        chains,
        outputs,
        lates,
        out,
        inbound,
        xout,
        xin,
        ops: plan
            .nodes
            .iter()
            .zip(&run.topo.first_port)
            .map(|(node, &first_port)| crate::operators::build(node, BuildCtx { first_port }))
            .collect(),
        sinks: sinks
            .0
            .iter()
            .zip(&plan.sinks)
            .map(|((name, s), p)| SinkWriter::open(name, &**s, id, first_id, p.sink.changelog()))
            .collect::<Result<_, _>>()?,
        dead: sinks
            .1
            .as_ref()
            .map(|s| SinkWriter::open("dead_letter", &**s, id, first_id, ChangelogEncoding::Append))
            .transpose()?,
        hot: super::shard::hot::PhaseOne::new(plan, id, run.n),
    })
}

type ShardHandles = Vec<std::thread::JoinHandle<ShardResult>>;

/// Starts one thread per shard, pinned to a core when the plan says so.
fn spawn_shards(
    plan: &Plan,
    setup: &Arc<ShardSetup>,
    parts: Vec<ShardParts>,
) -> Result<ShardHandles, RuntimeError> {
    let cores = if plan.runtime.pin_cores {
        core_affinity::get_core_ids().unwrap_or_default()
    } else {
        Vec::new()
    };
    let mut handles = Vec::new();
    for (id, parts_for) in parts.into_iter().enumerate() {
        let setup = setup.clone();
        let core = (!cores.is_empty()).then(|| cores[id % cores.len()]);
        let handle = std::thread::Builder::new()
            .name(format!("sluice-shard-{id}"))
            .spawn(move || {
                if let Some(c) = core {
                    if !core_affinity::set_for_current(c) && id == 0 {
                        tracing::warn!(
                            "pinning shard threads to cores was refused; running unpinned"
                        );
                    }
                }
                let mut shard = Shard::new(id, setup, parts_for);
                let res = shard.run();
                (res, shard.stats.clone(), shard.hist.clone())
            })
            .map_err(|e| RuntimeError::Shard {
                shard: id,
                message: format!("cannot start thread: {e}"),
            })?;
        handles.push(handle);
    }
    Ok(handles)
}

/// Starts serving the metrics endpoint bound earlier, now that the shards run.
fn start_api(
    server: Option<crate::api::Server>,
    live: &Option<Arc<crate::metrics::live::Live>>,
    stop: &Arc<AtomicBool>,
) -> Result<Option<std::thread::JoinHandle<()>>, RuntimeError> {
    let (Some(server), Some(live)) = (server, live) else {
        return Ok(None);
    };
    live.ready.store(true, std::sync::atomic::Ordering::Release);
    server
        .spawn(live.clone(), stop.clone())
        .map(Some)
        .map_err(|e| setup_err("(api)")(format!("cannot start the endpoint: {e}")))
}

/// The run's summary from what its shards reported.
fn summary(
    setup: &ShardSetup,
    opts: &RunOptions,
    ckpt: &Option<Arc<Ckpt>>,
    stats: &[ShardStats],
    hist: &hdrhistogram::Histogram<u64>,
    elapsed: std::time::Duration,
) -> RunSummary {
    let stopped = opts.stop.load(std::sync::atomic::Ordering::Relaxed);
    tracing::info!(
        stopped_by_signal = stopped,
        seconds = elapsed.as_secs_f64(),
        "job ended"
    );
    let mut summary = RunSummary::new(stats, hist, elapsed, stopped);
    summary.set_joins(&setup.op_names, stats);
    summary.set_hot_keys(&setup.op_names, stats);
    summary.alignment_paused_rounds = match &setup.log_align {
        Some(a) => a.paused(),
        None => setup.schedule.paused(),
    };
    if let Some(ck) = ckpt {
        summary.set_checkpoints(ck.metrics());
    }
    summary
}

type ShardResult = (Result<(), String>, ShardStats, hdrhistogram::Histogram<u64>);

/// Waits for every shard; a failing shard makes the others stop with a secondary error, so the
/// first primary one is reported.
fn join_shards(
    handles: Vec<std::thread::JoinHandle<ShardResult>>,
) -> (
    Vec<ShardStats>,
    hdrhistogram::Histogram<u64>,
    Option<RuntimeError>,
) {
    let mut stats: Vec<ShardStats> = Vec::new();
    let mut hist = latency_histogram();
    let mut errors: Vec<(bool, RuntimeError)> = Vec::new();
    for (id, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok((res, s, hh)) => {
                if let Err(message) = res {
                    let secondary = message == super::SECONDARY_FAILURE;
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
    errors.sort_by_key(|(secondary, _)| *secondary);
    (stats, hist, errors.into_iter().next().map(|(_, e)| e))
}
