//! One shard: a pinned worker thread that reads its share of source chunks, routes each event to the
//! shard owning its key, and runs the operators for the key groups it owns.
//!
//! Two duties alternate in one loop, never blocking:
//! - *produce*: read and parse the chunks `seq ≡ id (mod shards)`, sending each event to its owner
//!   through the SPSC ring to that shard (a shard has one to itself too, so its own events wait for
//!   their chunk's turn with the same credit) and ending each chunk with a `ChunkEnd` marker to every
//!   shard. A full ring is no credit: the shard stops reading its source until credit returns.
//! - *receive*: take events in global chunk order (chunk `seq` comes from shard `seq % shards`), so the
//!   watermark each event sees, and thus every result, is independent of thread timing; hand
//!   them to operators in runs of up to `RUN` events of one chunk, cut where a watermark step may be
//!   due, rather than one at a time. Operators reading other operators' output sit at deeper
//!   depths: after a chunk's depth 0, the shard merges what every shard's depth-0 operators emitted
//!   for it from that chunk (`merge`), and so on down; only then does it take the next chunk.
//!
//! Deadlock freedom: the lowest (chunk, depth) not yet done everywhere is never waiting on anything
//! later, because receivers only advance past a chunk after its end marker at each depth; every
//! shard keeps receiving while its own production is stalled; and output that finds no credit
//! waits in per-destination queues rather than stopping the operator that emitted it (a shard
//! starts no new chunk while they hold anything, which bounds them).

mod align;
pub mod emit;
pub mod exchange;
mod fire;
pub mod hot;
mod lookahead;
mod merge;
mod owners;
mod produce;
mod publish;
mod read;
mod receive;
mod snapshot;
pub mod steps;

use super::ring::{Consumer, Producer};
use super::setup::{ShardSetup, StopCoord};
use crate::connectors::sink::SinkWriter;
use crate::connectors::source::{Extent, Recall, SourceReader};
use crate::metrics::{latency_histogram, ShardStats};
use crate::operators::Operator;
use crate::record::event::Event;
use crate::time::{ChunkTime, WatermarkTracker};
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// How long without reading or processing an event before a shard naps between turns.
const QUIET_AFTER: std::time::Duration = std::time::Duration::from_millis(500);
/// Records (or received events) handled per step before the shard turns to its other duty.
const STEP: usize = 1024;
/// Most events handed to an operator at once: a run's events (16 KiB) stay in L1 while the operator
/// works through them.
const RUN: usize = 128;

/// What the shard knows of the chunk it is receiving.
struct ChunkCtx {
    /// Its partition, once a message of it arrived.
    part: Option<u16>,
    /// The largest `seen_max` of its events (a position inside the chunk) and its largest event
    /// time; known once its end marker arrived at depth 0.
    last_seen: i64,
    max_ts: i64,
    /// Per node: its watermark function over this chunk's events.
    times: Vec<ChunkTime>,
    /// Some message of the chunk was taken at depth 0.
    started: bool,
    /// When the chunk was read (ns since the runtime's epoch), for the latency histogram.
    ingest_ns: i64,
}

/// The chunk this shard is producing.
struct ProdChunk {
    seq: u64,
    part: u16,
    last: bool,
    ingest_ns: i64,
    /// Max event time so far in this chunk (the `seen_max` of the next event).
    seen_max: i64,
    /// The `seen_max` of the last record so far: the chunk's last position inside it.
    last_seen: i64,
    /// What its source's reader was asked to open.
    spec: crate::connectors::source::ChunkSpec,
    /// An empty padding slot of the chunk order.
    pad: bool,
    /// Its round in a job that reads logs with alignment, to report its end to the alignment.
    round: Option<u64>,
}

use emit::ShardEmitter;

pub struct Shard {
    id: usize,
    n: usize,
    setup: Arc<ShardSetup>,
    /// Per source: this shard's reader of it (taken out while a step reads it).
    readers: Vec<Option<Box<dyn SourceReader>>>,
    out: Vec<Option<Producer<Event>>>,
    /// Rings from every shard, this one's own included (`inbound[id]`: the events it routed to itself).
    inbound: Vec<Option<Consumer<Event>>>,
    /// Per depth `d` >= 1 (at `d - 1`): the rings from every shard carrying what their operators of
    /// depth `d - 1` emitted for operators here.
    xin: Vec<Vec<Option<Consumer<Event>>>>,
    /// Per depth (0: `inbound`, `d`: `xin[d - 1]`) and sender: how far records were hinted.
    look: Vec<Vec<lookahead::Cursor>>,
    // producing
    cur: Option<ProdChunk>,
    next_prod: u64,
    pending: VecDeque<(usize, Event)>,
    dead: Option<SinkWriter>,
    chains: Vec<Vec<steps::SourceChain>>,
    record_out: steps::RecordOut,
    // receiving
    next_seq: u64,
    /// The depth being received in chunk `next_seq`.
    depth: usize,
    /// Partition progress before chunk `next_seq`, and with its end applied (once depth 0 met it).
    tracker: WatermarkTracker,
    tracker_end: WatermarkTracker,
    chunk: ChunkCtx,
    /// Per node: its watermark (over its own inputs) as last advanced.
    node_wm: Vec<i64>,
    ops: Vec<Box<dyn Operator>>,
    merge: merge::Merge,
    emitter: ShardEmitter,
    emit_marks: Vec<(i64, u64)>,
    // checkpoints (shard 0 issues them)
    ckpt_issued: u64,
    ckpt_last: Instant,
    /// Id of the last barrier met (every shard meets the same ones).
    last_barrier: u64,
    /// The chunk this run started at (0, or a resumed checkpoint's).
    started_at: u64,
    // ending
    proposed: bool,
    stop_seq: Option<u64>,
    /// Why this shard must stop (unreadable input, failed write).
    failure: Option<String>,
    pub stats: ShardStats,
    pub hist: Histogram<u64>,
    /// Event-to-emit latency in ms (see `receive::advance`).
    event_hist: Histogram<u64>,
    last_publish: Instant,
    /// When the operators' state was last sampled, and each one's peak (`state_bytes_peak`).
    last_state_sample: Instant,
    state_peaks: Vec<u64>,
    /// Per source: records this shard read since `rate_start` (for `rate_limit`).
    rate_read: Vec<u64>,
    /// Per source: how many shards read it, so each reads its share of `rate_limit`.
    rate_readers: Vec<usize>,
    rate_start: Instant,
    /// Per source: the largest event time this shard has read (for the time-lag metric).
    source_read: Vec<i64>,
    /// Per partition: chunks read in this run of an aligned range partition beside logs (its
    /// next chunk index; the rounds it sits out are padding).
    aligned_read: Vec<u64>,
    /// Per partition: the next offset of a log after the chunks received so far, or for a range
    /// partition the chunks received so far; the position a checkpoint of a job reading logs
    /// records.
    positions: Vec<i64>,
    /// Phase one of `hot_keys` windows (None when no window combines on this shard).
    hot: Option<hot::PhaseOne>,
}

pub struct ShardParts {
    /// Per source: this shard's reader of it, and its recaller of late records.
    pub readers: Vec<Box<dyn SourceReader>>,
    pub recallers: Vec<Box<dyn Recall>>,
    /// Per source: its chains of filters and selects.
    pub chains: Vec<Vec<steps::SourceChain>>,
    /// Per node: the readers of its output and of its late side output.
    pub outputs: Vec<emit::Outlet>,
    pub lates: Vec<emit::Outlet>,
    pub out: Vec<Option<Producer<Event>>>,
    pub inbound: Vec<Option<Consumer<Event>>>,
    /// Per depth >= 1: rings to every shard, and from every shard.
    pub xout: Vec<Vec<Producer<Event>>>,
    pub xin: Vec<Vec<Option<Consumer<Event>>>>,
    pub ops: Vec<Box<dyn Operator>>,
    pub sinks: Vec<SinkWriter>,
    pub dead: Option<SinkWriter>,
    pub hot: Option<hot::PhaseOne>,
}

impl Shard {
    pub fn new(id: usize, setup: Arc<ShardSetup>, p: ShardParts) -> Shard {
        let n = setup.shards;
        let tracker = WatermarkTracker::new(&setup.tracker_init);
        let max_outputs = p
            .readers
            .iter()
            .map(|r| r.outputs())
            .max()
            .unwrap_or(1)
            .max(1);
        let nodes = p.ops.len();
        let emitter = emit::ShardEmitter::new(
            p.sinks,
            setup.parts.clone(),
            p.recallers,
            p.outputs,
            p.lates,
            p.xout.into_iter().map(exchange::Outbound::new).collect(),
            owners::Owners::new(setup.key_groups, n),
        );
        let mut shard = Shard {
            id,
            n,
            readers: p.readers.into_iter().map(Some).collect(),
            out: p.out,
            inbound: p.inbound,
            merge: merge::Merge::new(p.xin.len() + 1, n),
            look: vec![vec![lookahead::Cursor::default(); n]; p.xin.len() + 1],
            xin: p.xin,
            cur: None,
            next_prod: id as u64,
            pending: VecDeque::with_capacity(max_outputs + n),
            dead: p.dead,
            chains: p.chains,
            record_out: steps::RecordOut::default(),
            next_seq: 0,
            depth: 0,
            tracker_end: tracker.clone(),
            tracker,
            chunk: ChunkCtx {
                part: None,
                last_seen: i64::MIN,
                max_ts: i64::MIN,
                times: vec![ChunkTime::new(crate::time::WM_MIN, crate::time::WM_MAX, 0); nodes],
                started: false,
                ingest_ns: 0,
            },
            node_wm: vec![crate::time::WM_MIN; nodes],
            ops: p.ops,
            emitter,
            emit_marks: Vec::new(),
            ckpt_issued: 0,
            ckpt_last: Instant::now(),
            last_barrier: 0,
            started_at: 0,
            proposed: false,
            stop_seq: None,
            failure: None,
            stats: ShardStats::default(),
            hist: latency_histogram(),
            event_hist: crate::metrics::event_latency_histogram(),
            last_publish: Instant::now(),
            last_state_sample: Instant::now(),
            state_peaks: Vec::new(),
            rate_read: vec![0; setup.sources.len()],
            rate_readers: rate_readers(&setup),
            source_read: vec![i64::MIN; setup.sources.len()],
            aligned_read: vec![0; setup.parts.len()],
            rate_start: Instant::now(),
            positions: setup
                .parts
                .iter()
                .map(|p| match p.extent {
                    Extent::Log { start, .. } => start,
                    Extent::Ranges { .. } => p.first_chunk as i64,
                })
                .collect(),
            hot: p.hot,
            setup,
        };
        if let Err(e) = shard.resume() {
            shard.failure = Some(e);
        }
        shard
    }

    fn now_ns(&self) -> i64 {
        self.setup.epoch.elapsed().as_nanos() as i64
    }

    /// The chunk sequence at which this run ends (exclusive).
    fn end_seq(&self) -> u64 {
        let total = self.setup.schedule.total().unwrap_or(u64::MAX);
        total.min(self.stop_seq.unwrap_or(u64::MAX))
    }

    /// Runs until every chunk before the end has been produced and received.
    pub fn run(&mut self) -> Result<(), String> {
        let mut idle_spins = 0u32;
        let mut last = Instant::now();
        // When an event was last read or processed: a quiet stream (only empty chunk ends and
        // markers moving) naps between turns instead of spinning.
        let (mut events_seen, mut last_events) = (0u64, Instant::now());
        loop {
            self.check_stop();
            let received = self.receive_step();
            let (produced, stalled) = self.produce_step();
            for r in self.readers.iter_mut().flatten() {
                r.tick(stalled);
            }
            for p in self.out.iter_mut().flatten() {
                p.flush();
            }
            for o in &mut self.emitter.next {
                o.drain();
                o.flush();
            }
            if let Some(e) = self.emitter.error.take() {
                self.failure = Some(e.to_string());
            }
            if let Some(why) = self.failure.take() {
                // Others would wait forever for this shard's chunks: tell them to give up too.
                self.setup.stop.failed.store(true, Ordering::Release);
                return Err(why);
            }
            if self.setup.stop.failed.load(Ordering::Relaxed) {
                return Err(super::SECONDARY_FAILURE.into());
            }
            let now = Instant::now();
            let dt = now - last;
            last = now;
            self.maybe_publish(now);
            self.maybe_sample_state(now);
            for s in &mut self.emitter.sinks {
                if let Err(e) = s.tick(now) {
                    self.failure.get_or_insert(e.to_string());
                }
            }
            if received + produced > 0 {
                self.stats.busy += dt;
                idle_spins = 0;
            } else if stalled {
                self.stats.backpressured += dt;
            } else {
                self.stats.idle += dt;
            }
            let end = self.end_seq();
            if self.next_seq >= end
                && self.next_prod >= end
                && self.cur.is_none()
                && self.pending.is_empty()
                && self.emitter.next.iter().all(exchange::Outbound::is_idle)
            {
                break;
            }
            let events = self.stats.events_in + self.stats.events_processed;
            if events != events_seen {
                (events_seen, last_events) = (events, now);
            }
            if now.duration_since(last_events) >= QUIET_AFTER {
                // No event for a while: wake once a millisecond; the first record after the
                // lull waits at most that much longer.
                std::thread::sleep(std::time::Duration::from_millis(1));
            } else if received + produced == 0 {
                idle_spins += 1;
                if idle_spins < 64 {
                    std::hint::spin_loop();
                } else if idle_spins < 256 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
            }
        }
        self.finish()
    }

    fn finish(&mut self) -> Result<(), String> {
        self.dead_results();
        self.stats.records_filtered += self.emitter.results_filtered;
        self.emitter.results_filtered = 0;
        self.stats.late_to_side_output += self.emitter.late_to_side;
        self.emitter.late_to_side = 0;
        self.final_checkpoint();
        if let Some(why) = self.failure.take() {
            return Err(why);
        }
        self.stats.operators.clear();
        for (i, op) in self.ops.iter().enumerate() {
            let mut r = crate::metrics::OperatorReport::default();
            op.report(&mut r);
            r.state_bytes_peak = r
                .state_bytes
                .max(self.state_peaks.get(i).copied().unwrap_or(0));
            self.stats.fired += r.fired;
            self.stats.refired += r.refired;
            self.stats.late_dropped += r.late_dropped;
            self.stats.open_windows += r.open;
            self.stats.operators.push(r);
        }
        if let Some(h) = &self.hot {
            self.stats.hot_keys = h.hot_keys();
        }
        for s in &mut self.emitter.sinks {
            s.finish().map_err(|e| e.to_string())?;
        }
        self.dead_results();
        if let Some(d) = self.dead.as_mut() {
            d.flush().map_err(|e| e.to_string())?;
        }
        for r in self.readers.iter_mut().flatten() {
            r.commit_positions(true);
        }
        Ok(())
    }

    /// Joins the stop protocol once a signal asked for it: all shards agree on the first chunk nobody
    /// has started, finish everything before it, and end there. A shard that has already ended never
    /// joins, and need not: it ends only after every chunk's end marker, so no chunk is left to start
    /// and the others end on their own.
    fn check_stop(&mut self) {
        if self.stop_seq.is_some() {
            return;
        }
        let coord: &StopCoord = &self.setup.stop;
        if !coord.requested.load(Ordering::Relaxed) {
            return;
        }
        if !self.proposed {
            if self.id == 0 {
                tracing::info!("stop requested: draining (a second signal exits at once)");
            }
            coord.proposal.fetch_max(self.next_prod, Ordering::AcqRel);
            coord.arrived.fetch_add(1, Ordering::AcqRel);
            self.proposed = true;
        }
        if coord.arrived.load(Ordering::Acquire) == self.n {
            self.stop_seq = Some(coord.proposal.load(Ordering::Acquire));
        }
    }
}

/// Per source, the shards that read it: every shard for range partitions (their chunks go
/// round), for logs those owning one of its partitions (partition `i` belongs to shard `i % n`).
fn rate_readers(setup: &ShardSetup) -> Vec<usize> {
    let n = setup.shards.max(1);
    (0..setup.sources.len())
        .map(|src| {
            let mut owners: Vec<usize> = setup
                .parts
                .iter()
                .enumerate()
                .filter(|(_, p)| p.source == src && p.is_log())
                .map(|(i, _)| i % n)
                .collect();
            owners.sort_unstable();
            owners.dedup();
            if owners.is_empty() {
                n
            } else {
                owners.len()
            }
        })
        .collect()
}
