//! Starting a run, step by step: the chunk schedule, the graph's topology, each shard's parsers,
//! routes and outlets, the sinks, the metrics endpoint, the rings, then the shard threads; and
//! collecting what they report when they end. Everything that can fail does before any thread
//! starts, so a bad source, sink or address fails the run at once.

use super::checkpointing::{self, Ckpt, Resume};
use super::ring::{self, Consumer, Producer};
use super::schedule::{ChunkCount, ChunkOrder, Schedule};
use super::setup::{ShardSetup, StopCoord};
use super::shard::emit::Outlet;
use super::shard::steps::Route;
use super::shard::{Shard, ShardParts, SourceParser};
use super::topology::{Readers, Topology};
use super::{aligned, kafka_positions, restore_order, RunOptions, RuntimeError};
use crate::connectors::sink::{OpenCx, OpenSink, SinkWriter};
use crate::metrics::{latency_histogram, RunSummary, ShardStats};
use crate::operators::steps::RecordChain;
use crate::operators::BuildCtx;
use crate::plan::{Plan, SourceKind};
use crate::record::bind::RecordParser;
use crate::record::event::Event;
use crate::sources::generator::GenParser;
use crate::sources::{PartKind, Partition};
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

/// What a run's chunks are: their counts, their order, whether the job reads Kafka, and the
/// alignment of its Kafka partitions.
type Chunks = (
    Vec<ChunkCount>,
    ChunkOrder,
    bool,
    Option<Arc<super::kafka_align::KafkaAlign>>,
);

/// The chunk order of a run: padded rounds for Kafka (aligned Kafka partitions sitting rounds
/// out), aligned on event time when a file or generator source sets `max_drift`, else fixed by
/// sizes.
fn schedule(plan: &Plan, parts: &[Partition], n: usize) -> Chunks {
    let kafka_job = parts.iter().any(|p| matches!(p.kind, PartKind::Kafka(_)));
    let mut chunk_counts: Vec<_> = parts
        .iter()
        .map(|p| p.chunks(plan.runtime.chunk_bytes))
        .collect();
    if kafka_job {
        // Every Kafka partition gets a chunk in every round (bounded ones run empty once done),
        // so the order stays a plain function of the sequence number.
        let common = parts
            .iter()
            .zip(&chunk_counts)
            .filter(|(p, _)| matches!(p.kind, PartKind::Kafka(_)))
            .try_fold(0u64, |m, (_, c)| c.map(|c| m.max(c)));
        for (p, c) in parts.iter().zip(chunk_counts.iter_mut()) {
            if matches!(p.kind, PartKind::Kafka(_)) {
                *c = common;
            }
        }
    }
    let aligned = parts
        .iter()
        .any(|p| plan.sources[p.source].watermark.max_drift_ms.is_some());
    let order = if kafka_job {
        // A Kafka partition is read by the shard whose consumer owns it (`i % shards`).
        let pinned: Vec<Option<usize>> = parts
            .iter()
            .enumerate()
            .map(|(i, p)| matches!(p.kind, PartKind::Kafka(_)).then_some(i % n))
            .collect();
        // Aligned: partitions of sources with `max_drift`, except files with no chunk at all
        // (nothing to read, nothing to report).
        let aligned: Vec<bool> = parts
            .iter()
            .zip(&chunk_counts)
            .map(|(p, c)| plan.sources[p.source].watermark.max_drift_ms.is_some() && *c != Some(0))
            .collect();
        let align = super::kafka_align::KafkaAlign::new(
            &parts
                .iter()
                .zip(&chunk_counts)
                .zip(&aligned)
                .map(|((p, c), &on)| {
                    let drift = plan.sources[p.source].watermark.max_drift_ms?;
                    let chunks = if matches!(p.kind, PartKind::Kafka(_)) {
                        None
                    } else {
                        *c
                    };
                    on.then_some((drift, p.max_out_of_orderness_ms, chunks))
                })
                .collect::<Vec<_>>(),
        )
        .map(Arc::new);
        let Some(align) = align else {
            let order = ChunkOrder::Mixed(super::schedule::Mixed::new(&chunk_counts, &pinned, n));
            return (chunk_counts, order, kafka_job, None);
        };
        // The job is bounded when every partition is; aligned partitions then take as many
        // rounds as sitting out makes them need, the others end by their counts.
        let bounded = parts.iter().zip(&chunk_counts).all(|(p, c)| match &p.kind {
            PartKind::Kafka(k) => k.end.is_some(),
            _ => c.is_some(),
        });
        for (c, &on) in chunk_counts.iter_mut().zip(&aligned) {
            if on {
                *c = None;
            }
        }
        let others = chunk_counts
            .iter()
            .zip(&aligned)
            .filter(|(_, &on)| !on)
            .try_fold(0u64, |m, (c, _)| c.map(|c| m.max(c)));
        let order = super::schedule::Mixed::new(&chunk_counts, &pinned, n)
            .aligned(align.clone(), others.filter(|_| bounded));
        return (
            chunk_counts,
            ChunkOrder::Mixed(order),
            kafka_job,
            Some(align),
        );
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
    (chunk_counts, order, kafka_job, None)
}

/// Per source: the parser binding its records for the ports that read it as it is.
fn parsers(plan: &Plan, topo: &Topology, memory: bool) -> Result<Vec<SourceParser>, RuntimeError> {
    plan.sources
        .iter()
        .zip(&topo.sources)
        .map(|(s, readers)| {
            let err = setup_err(format!("source `{}`", s.name));
            if memory {
                return Ok(SourceParser::Memory);
            }
            let b = &readers.ports;
            let guard = |p: RecordParser| {
                p.with_guard(s.event_time.max_future_ms, s.event_time.allow_negative)
            };
            Ok(match &s.kind {
                // Nexmark records are JSON lines, bound like a file's (its event time a field).
                SourceKind::File { .. } | SourceKind::Nexmark(_) => SourceParser::Json(guard(
                    RecordParser::new(&s.event_time.field, s.event_time.unit, b).map_err(&err)?,
                )),
                SourceKind::Generator(_) => match GenParser::new(b) {
                    Ok(g) => SourceParser::Gen(g),
                    Err(_) => SourceParser::GenJson(RecordParser::keyed(b).map_err(&err)?),
                },
                SourceKind::Kafka(k) if k.kafka_timestamp => {
                    SourceParser::Json(guard(RecordParser::keyed(b).map_err(&err)?))
                }
                SourceKind::Kafka(_) => SourceParser::Json(guard(
                    RecordParser::new(&s.event_time.field, s.event_time.unit, b).map_err(&err)?,
                )),
            })
        })
        .collect()
}

/// Per CSV source: its columns, named in the config or by the first line of its first file.
fn csv_shapes(
    plan: &Plan,
    parts: &[crate::sources::Partition],
) -> Result<crate::sources::csv::CsvSources, RuntimeError> {
    use crate::sources::csv::{header_columns, CsvShape};
    let mut out = Vec::new();
    for (i, s) in plan.sources.iter().enumerate() {
        let Some(c) = &s.csv else {
            out.push(None);
            continue;
        };
        let err = setup_err(format!("source `{}`", s.name));
        let columns = if c.columns.is_empty() {
            let first = parts.iter().find_map(|p| match &p.kind {
                crate::sources::PartKind::File { path, .. } if p.source == i => Some(path),
                _ => None,
            });
            let Some(path) = first else {
                return Err(err(
                    "a CSV header is read from the first file, and no file matches".into(),
                ));
            };
            let line = first_line(path, plan.runtime.max_line_bytes)
                .map_err(|e| err(format!("reading the header of `{}`: {e}", path.display())))?;
            header_columns(&line, c.delimiter)
                .map_err(|e| err(format!("the header of `{}`: {e}", path.display())))?
        } else {
            c.columns.clone()
        };
        out.push(Some((
            Arc::new(CsvShape::new(&columns, c.delimiter)),
            c.header,
        )));
    }
    Ok(out)
}

/// The first line of `path` (without its newline), at most `max` bytes.
fn first_line(path: &std::path::Path, max: usize) -> std::io::Result<Vec<u8>> {
    use std::io::{BufRead, Read};
    let f = std::fs::File::open(path)?;
    let mut line = Vec::new();
    std::io::BufReader::new(f)
        .take(max as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    Ok(line)
}

/// Per source: its parser, and its routes (chains of filters and selects), each route's first
/// step reading the fields the source's parser finds in the same pass over the line.
type SourceReaders = (Vec<SourceParser>, Vec<Vec<Route>>);

fn source_readers(
    plan: &Plan,
    topo: &Topology,
    memory: bool,
) -> Result<SourceReaders, RuntimeError> {
    let mut parsers = parsers(plan, topo, memory)?;
    let mut routes = source_routes(plan, topo, memory)?;
    for (p, rs) in parsers.iter_mut().zip(&mut routes) {
        for r in rs.iter_mut() {
            let Some(names) = r.chain.first_fields() else {
                continue;
            };
            if let Some(map) = p.keep_fields(names) {
                r.chain.read_first_from(map);
            }
        }
        // Readers of a source's line itself take their fields from the same pass as well.
        for r in rs.iter_mut().filter(|r| r.direct) {
            let Some(rp) = r.parser.as_mut() else {
                continue;
            };
            if let Some(map) = p.keep_fields(&rp.top_fields()) {
                rp.read_from_kept(&map);
            }
        }
    }
    Ok((parsers, routes))
}

/// Per source: its chains of filters and selects, with the ports and sinks at their ends.
fn source_routes(
    plan: &Plan,
    topo: &Topology,
    memory: bool,
) -> Result<Vec<Vec<Route>>, RuntimeError> {
    let err = setup_err("(filters and selects)");
    topo.sources
        .iter()
        .map(|r| {
            r.chains
                .iter()
                .filter(|_| !memory)
                .map(|c| {
                    Ok(Route {
                        chain: RecordChain::new(&plan.steps, &c.steps).map_err(&err)?,
                        parser: match c.ports.is_empty() {
                            true => None,
                            false => Some(RecordParser::keyed(&c.ports).map_err(&err)?),
                        },
                        sinks: c.sinks.clone(),
                        bound: false,
                        direct: c.direct,
                    })
                })
                .collect()
        })
        .collect()
}

/// The readers of one node's output (or late side output), compiled for one shard.
fn outlet(plan: &Plan, r: &Readers) -> Result<Outlet, RuntimeError> {
    let err = setup_err("(operator outputs)");
    Ok(Outlet {
        sinks: r.sinks.clone(),
        parser: match r.ports.is_empty() {
            true => None,
            false => Some(RecordParser::keyed(&r.ports).map_err(&err)?),
        },
        chains: r
            .chains
            .iter()
            .map(|c| {
                Ok((
                    RecordChain::new(&plan.steps, &c.steps).map_err(&err)?,
                    match c.ports.is_empty() {
                        true => None,
                        false => Some(RecordParser::keyed(&c.ports).map_err(&err)?),
                    },
                    c.sinks.clone(),
                ))
            })
            .collect::<Result<_, RuntimeError>>()?,
        retractions: r.retractions,
    })
}

type Outlets = (Vec<Outlet>, Vec<Outlet>);

fn outlets(plan: &Plan, topo: &Topology) -> Result<Outlets, RuntimeError> {
    let outputs = topo
        .outputs
        .iter()
        .map(|r| outlet(plan, r))
        .collect::<Result<_, _>>()?;
    let lates = topo
        .lates
        .iter()
        .map(|r| outlet(plan, r))
        .collect::<Result<_, _>>()?;
    Ok((outputs, lates))
}

/// The sinks of a run, opened, by name; and the dead-letter output.
type OpenSinks = (Vec<(String, Arc<dyn OpenSink>)>, Option<Arc<dyn OpenSink>>);

/// Opens every sink, each through its connector; under `[checkpoint]` their committers join the
/// checkpoints' two-phase commit.
fn open_sinks(
    plan: &Plan,
    ckpt: Option<&super::checkpointing::Ckpt>,
    resumed: bool,
    n: usize,
) -> Result<OpenSinks, RuntimeError> {
    let dead = match &plan.dead_letter {
        Some(path) => Some(crate::connectors::file::dead_letters(path, resumed)?),
        None => None,
    };
    let mut open = Vec::new();
    let mut committers = Vec::new();
    for s in &plan.sinks {
        let known = crate::plan::columns::known_columns(plan, s);
        let result_keys = crate::plan::columns::result_keys(plan, s);
        let cx = OpenCx {
            name: &s.name,
            shards: n,
            checkpoint_dir: plan.checkpoint.as_ref().map(|c| c.dir.as_path()),
            resumed,
            dead: dead.as_ref(),
            known: &known,
            result_keys: &result_keys,
        };
        let sink = s.sink.open(&cx)?;
        committers.extend(sink.committer());
        open.push((s.name.clone(), sink));
    }
    if let Some(ck) = ckpt {
        // Set once, before the checkpoint writer starts.
        let _ = ck.committers.set(committers);
    }
    Ok((open, dead))
}

type Endpoint = (
    Option<Arc<crate::metrics::live::Live>>,
    Option<crate::api::Server>,
);

/// The metrics endpoint, bound before any shard starts: a taken address fails the run at once.
fn endpoint(
    plan: &Plan,
    parts: &[Partition],
    n: usize,
    names: &[String],
    sinks: &[(String, Arc<dyn OpenSink>)],
) -> Result<Endpoint, RuntimeError> {
    let Some(api) = &plan.api else {
        return Ok((None, None));
    };
    let (addr, err) = (api.address, setup_err("(api)"));
    let server = crate::api::Server::bind(addr, api.into())
        .map_err(|e| err(format!("cannot listen on {addr}: {e}")))?;
    if api.remote {
        tracing::warn!(
            address = %addr,
            "the endpoint listens beyond loopback (api.allow_remote = true): anyone who can reach \
             it can read /metrics, and it has no authentication"
        );
    }
    let mut live = crate::metrics::live::Live::new(n, names.to_vec());
    live.source_names = plan.sources.iter().map(|s| s.name.clone()).collect();
    live.partition_names = parts.iter().map(|p| p.name.clone()).collect();
    live.sinks = sinks.iter().filter_map(|(_, s)| s.counters()).collect();
    let kparts: Vec<_> = parts
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match (&p.kind, &plan.sources[p.source].kind) {
            (PartKind::Kafka(k), SourceKind::Kafka(kp)) => Some((i as u16, &**kp, k)),
            _ => None,
        })
        .collect();
    if !kparts.is_empty() {
        live.kafka = Some(crate::sources::kafka::HighWatch::new(&kparts).map_err(&err)?);
    }
    Ok((Some(Arc::new(live)), Some(server)))
}

/// One ring per ordered pair of shards (a shard's ring to itself holds what it routed to itself
/// until that chunk's turn: the same credit and receive path as any other): `outs[from][to]`,
/// `ins[to][from]`.
type Rings = (
    Vec<Vec<Option<Producer<Event>>>>,
    Vec<Vec<Option<Consumer<Event>>>>,
);

fn rings(n: usize, capacity: usize) -> Rings {
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
}

pub(super) fn run_shards(
    plan: &Plan,
    opts: RunOptions,
    parts: Vec<Partition>,
    ckpt: Option<Arc<Ckpt>>,
    resume: Option<Arc<Resume>>,
    jobs: Option<std::sync::mpsc::Receiver<checkpointing::Job>>,
) -> Result<RunSummary, RuntimeError> {
    let n = plan.runtime.shards.max(1);
    let first_id = ckpt.as_ref().map_or(0, |c| c.base_id + 1);
    let mut parts = parts;
    let kafka = parts.iter().any(|p| matches!(p.kind, PartKind::Kafka(_)));
    if let (true, Some(r)) = (kafka, &resume) {
        kafka_positions::restore(&mut parts, r)?;
    }
    let (chunk_counts, schedule, kafka_job, kafka_align) = schedule(plan, &parts, n);
    let topo = Arc::new(Topology::new(plan, &parts));
    let memory = parts
        .iter()
        .any(|p| matches!(p.kind, PartKind::Memory { .. }));
    // Fail before any thread starts.
    source_readers(plan, &topo, memory)?;
    outlets(plan, &topo)?;
    let (shared, dead) = open_sinks(plan, ckpt.as_deref(), resume.is_some(), n)?;
    let parts = Arc::new(parts);
    let op_names: Vec<String> = plan.nodes.iter().map(|n| n.name.clone()).collect();
    let (live, server) = endpoint(plan, &parts, n, &op_names, &shared)?;
    // A partition with nothing to read (an empty file, a bounded Kafka partition whose start is
    // its end) is finished from the start, as Flink's finished split, and never holds the
    // watermark back; its own chunk count says so, not the padded count of the chunk order.
    let tracker_init: Vec<(i64, bool)> = parts
        .iter()
        .map(|p| {
            let live = p.chunks(plan.runtime.chunk_bytes) != Some(0);
            (p.max_out_of_orderness_ms, live)
        })
        .collect();
    if let Some(r) = &resume {
        restore_order(&schedule, &tracker_init, r)?;
    }
    let avro = kafka_positions::avro_sources(plan)?;
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
        csv: csv_shapes(plan, &parts)?,
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
        kafka_align,
        topo: topo.clone(),
        stop: StopCoord {
            requested: opts.stop.clone(),
            failed: Arc::new(AtomicBool::new(false)),
            ..StopCoord::default()
        },
        epoch: Instant::now(),
        op_names,
        ckpt: ckpt.clone(),
        live: live.clone(),
        resume,
    });
    let (outs, ins) = rings(n, plan.runtime.ring_capacity);
    // Per depth below the sources, the same again.
    let mut deep: Vec<Rings> = (1..topo.depths)
        .map(|_| rings(n, plan.runtime.ring_capacity))
        .collect();
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
        depths = topo.depths,
        "job started"
    );
    let start = Instant::now();
    let mut handles = Vec::new();
    let cores = if plan.runtime.pin_cores {
        core_affinity::get_core_ids().unwrap_or_default()
    } else {
        Vec::new()
    };
    for (id, (out, inbound)) in outs.into_iter().zip(ins).enumerate() {
        let (outputs, lates) = outlets(plan, &topo)?;
        let mut xout = Vec::new();
        let mut xin = Vec::new();
        for (o, i) in &mut deep {
            xout.push(o[id].iter_mut().filter_map(Option::take).collect());
            xin.push(i[id].iter_mut().map(Option::take).collect());
        }
        let (parsers, routes) = source_readers(plan, &topo, memory)?;
        let parts_for = ShardParts {
            parsers,
            routes,
            outputs,
            lates,
            out,
            inbound,
            xout,
            xin,
            ops: plan
                .nodes
                .iter()
                .zip(&topo.first_port)
                .map(|(node, &first_port)| crate::operators::build(node, BuildCtx { first_port }))
                .collect(),
            sinks: shared
                .iter()
                .map(|(name, s)| SinkWriter::open(name, &**s, id, first_id))
                .collect::<Result<_, _>>()?,
            dead: dead
                .as_ref()
                .map(|s| SinkWriter::open("dead_letter", &**s, id, first_id))
                .transpose()?,
            kafka: kafka_positions::reader(plan, &parts, id, n, &avro)?,
            hot: super::shard::hot::PhaseOne::new(plan, id, n),
        };
        let setup = setup.clone();
        let core = (!cores.is_empty()).then(|| cores[id % cores.len()]);
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
    let api = match (server, &live) {
        (Some(server), Some(live)) => {
            live.ready.store(true, std::sync::atomic::Ordering::Release);
            Some(
                server
                    .spawn(live.clone(), api_stop.clone())
                    .map_err(|e| setup_err("(api)")(format!("cannot start the endpoint: {e}")))?,
            )
        }
        _ => None,
    };
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
    summary.alignment_paused_rounds = match &setup.kafka_align {
        Some(a) => a.paused(),
        None => setup.schedule.paused(),
    };
    if let Some(ck) = &ckpt {
        summary.set_checkpoints(ck.metrics());
    }
    Ok(summary)
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
