//! Operators: per-shard, single-threaded event processors driven by the runtime.
//!
//! An operator sees events already routed to the shard that owns their key, together with the
//! exact event-time watermark of its own inputs (see `time`). It owns all state for its keys and
//! never sees threads, rings, sources or sinks: results leave through an [`Emitter`], as records
//! (JSON lines) with their event time and what caused them. The runtime knows operators only
//! through the [`Operator`] trait and builds them through [`build`]. `kinds` is the registry: the
//! one list of operator kinds, from their `[transforms.NAME]` tables to their plan nodes; each
//! kind's folder holds its config table, its validation into the plan (`plan.rs`), the operator
//! and its tests.

pub mod dedupe;
pub mod detect;
pub mod group_agg;
pub mod interval_join;
pub mod keys;
mod kinds;
pub mod over_agg;
pub mod rank;
pub mod regular_join;
pub mod rows;
pub mod steps;
pub mod temporal_join;
#[cfg(test)]
pub mod testing;
pub mod timers;
pub mod top_n;
pub mod window;

pub(crate) use kinds::{listed, table_inputs, TransformTable};
pub use kinds::{NodeKind, NodeSpec, TransformConfig};

pub use dedupe::config::DedupeConfig;
pub use interval_join::config::{IntervalJoinConfig, IntervalJoinKind};
pub use regular_join::config::RegularJoinConfig;
pub use steps::config::{FilterTransformConfig, SelectTransformConfig};
pub use temporal_join::config::{
    JoinOnConfig, OutOfOrderVersions, TemporalJoinConfig, TemporalJoinKind,
};
pub use top_n::config::TopNConfig;
pub use window::config::{
    Aggregates, HotKeyMode, HotKeysConfig, WindowConfig, WindowTransformConfig,
};

use crate::checkpoint::codec::{Dec, Enc};
use crate::metrics::OperatorReport;
use crate::plan::NodePlan;
use crate::record::event::{Event, Rec, RowKind};
use crate::time::ChunkTime;

/// One output record of an operator.
#[derive(Clone, Copy, Debug)]
pub struct Output<'a> {
    /// One complete JSON object followed by `\n`.
    pub line: &'a [u8],
    /// Its event time (a window result: `window_end - 1`; an interval-join pair: the later row's;
    /// a temporal-join row and a dedupe row: their input's).
    pub ts: i64,
    /// The event whose arrival produced it; `None` when a watermark step did (a window firing, a
    /// dedupe or temporal join deciding waiting rows, an outer join's unmatched row leaving).
    pub cause: Option<&'a Event>,
    /// The hash of the state's key it comes from: records fired by one step are ordered by it.
    pub key: u64,
    /// The change it is (Flink's `RowKind`): `+I` for a new row; a re-fired window sends `-U`
    /// (its previous value, only where a reader aggregates it) then `+U`; a group aggregate
    /// `-U`/`+U` for an update and `-D` when its group empties.
    pub kind: RowKind,
}

/// Where an operator's output goes. Called per emitted record, never per input event.
pub trait Emitter {
    fn emit(&mut self, out: Output<'_>);
    /// An input record too late for the operator (already counted by it): goes to the late side
    /// output, if any, as the record it was.
    fn late(&mut self, rec: &Rec<'_>);
    /// Whether anything consumes retractions (a window downstream): otherwise an operator need not
    /// render them.
    fn wants_retractions(&self) -> bool {
        false
    }
}

/// What an operator is built with on one shard.
#[derive(Debug, Clone, Copy)]
pub struct BuildCtx {
    /// The id of the node's first port: an event's side is `event.port - first_port`.
    pub first_port: u16,
}

pub trait Operator: Send {
    /// Processes one event. `wm` is the operator's watermark at its arrival; `on_watermark(wm)`
    /// has already been called with it where anything was due.
    fn on_event(&mut self, e: &Rec<'_>, wm: i64, out: &mut dyn Emitter);

    /// Processes a leading part of a run of payload-free events of one chunk, in order, and returns
    /// how many (at least one). The watermark at the arrival of each event `e` is
    /// `time.before(e.seen_max)` (never decreasing along the run), and at the first event it is
    /// below `next_action()`. The operator must stop before the first event whose watermark
    /// reaches its `next_action()` as it stands after the events before it (processing may create
    /// new timers), so the runtime can call `on_watermark` there. Must give exactly what
    /// `on_event` per event gives; an operator overrides it to work through the run faster.
    fn on_run(&mut self, events: &[Event], time: &ChunkTime, out: &mut dyn Emitter) -> usize {
        for (i, e) in events.iter().enumerate() {
            let wm = time.before(e.seen_max);
            if i > 0 && wm >= self.next_action() {
                return i;
            }
            self.on_event(&Rec::of(e), wm, out);
        }
        events.len()
    }

    /// Phase two of a two-phase operator (see `runtime::shard::hot`): merges a partial result
    /// combined where its events were read (`rec.blob()`), at watermark `wm`; what the merge
    /// changes (a group aggregate's row) goes to `out`. Only operators that offer a combiner
    /// receive these.
    fn on_partial(
        &mut self,
        _rec: &Rec<'_>,
        _wm: i64,
        _out: &mut dyn Emitter,
    ) -> Result<(), String> {
        Err("this operator does not take partial aggregates".into())
    }

    /// Appends this operator's whole state (every key it holds, its firing progress and counters)
    /// for a checkpoint; `restore` reads it back.
    fn snapshot(&self, out: &mut Enc);

    /// Adds the keys of one snapshot (as `snapshot` wrote it) that `keep(key hash)` selects. `wm` is
    /// the watermark the snapshot was taken at. Called once per snapshot read: after a rescale a
    /// shard reads every old shard's snapshot and keeps its own key groups.
    fn restore(&mut self, state: &[u8], keep: &dyn Fn(u64) -> bool, wm: i64) -> Result<(), String>;

    /// A hint: `ev` (a record with its row, as `on_event` will see it) arrives a few records from
    /// now. An operator whose keyed state outgrows the cache starts fetching the lines it will
    /// read for it: at `stage` 0 what the event alone locates (an index line), at stage 1 (about
    /// half as far ahead, so the stage-0 line is cached) what that line points to. Must not
    /// change anything the operator does.
    #[inline]
    fn prefetch(&self, _ev: &Event, _stage: u8) {}

    /// The watermark advanced to `wm` (strictly increasing between calls).
    fn on_watermark(&mut self, _wm: i64, _out: &mut dyn Emitter) {}
    /// The earliest watermark at which `on_watermark` would do anything; the runtime may skip calls
    /// below it.
    fn next_action(&self) -> i64 {
        i64::MIN
    }
    /// Adds what it holds and has done to `r`: read every publish (0.1 s), so it must be cheap.
    fn report(&self, r: &mut OperatorReport);
}

/// Phase one of a two-phase operator (`hot_keys`): what the shard that reads a hot key's events
/// keeps of them until it hands them on as partial results to the key's owner, who merges them
/// (`Operator::on_partial`). Offered by operators whose results merge in any grouping.
pub trait Combine: Send {
    /// Folds `ev` into its partial; returns where (a table and a row, for [`Combine::combined`])
    /// and the pane start when this is the first event of its pane since the last hand-off.
    fn add(&mut self, ev: &Event) -> (u32, u32, Option<i64>);
    /// [`Combine::add`] for an event read with its payload (wide values, a long key); `None`
    /// when this combiner folds only header-only events (the event then goes on raw).
    fn add_rec(&mut self, _rec: &Rec<'_>) -> Option<(u32, u32, Option<i64>)> {
        None
    }
    /// The first watermark above `floor` at which anything changes for pane `p` (a window of it
    /// fires, stops taking late events, or is cleaned up).
    fn next_change_above(&self, p: i64, floor: i64) -> i64;
    /// Sends every partial whose windows are all open at `wm` and whose message (header and
    /// payload) takes at most `max_slots` ring slots (as `PARTIAL` messages built on `head`);
    /// returns the events they combine.
    fn hand_off(
        &mut self,
        wm: i64,
        head: &Event,
        max_slots: usize,
        send: &mut dyn FnMut(&Event, &crate::record::event::PayloadBuf),
    ) -> u64;
    /// Whether the events held at (table, row) went in a partial at the last hand-off.
    fn combined(&self, table: u32, row: u32) -> bool;
    /// Forgets everything since the last hand-off.
    fn clear(&mut self);
}

/// The phase one node `node` offers, with its `hot_keys` settings, if it has any.
pub fn combiner(node: &NodePlan) -> Option<(Box<dyn Combine>, crate::plan::HotKeysPlan)> {
    node.kind.spec().combiner()
}

/// Builds node `node`'s operator for one shard.
pub fn build(node: &NodePlan, ctx: BuildCtx) -> Box<dyn Operator> {
    node.kind.spec().build(ctx)
}

/// Counters every operator keeps, in its checkpoint state so a restored run's totals go on.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    /// Records emitted when the watermark passed (window results, rows that passed or joined).
    pub fired: u64,
    /// Results emitted again because an event arrived within the allowed lateness.
    pub refired: u64,
    /// Input records dropped for lateness (each also goes to the late output if configured).
    pub late_dropped: u64,
}

impl Counters {
    /// Appends the counters to an operator's checkpoint state.
    pub fn encode(&self, e: &mut Enc) {
        for n in [self.fired, self.refired, self.late_dropped] {
            e.u64(n);
        }
    }

    /// Adds counters written by `encode` (a restore may read several snapshots, one per old shard).
    pub fn add_decoded(&mut self, d: &mut Dec) -> Result<(), String> {
        self.fired += d.u64("stats")?;
        self.refired += d.u64("stats")?;
        self.late_dropped += d.u64("stats")?;
        Ok(())
    }

    pub fn report(&self, r: &mut OperatorReport) {
        r.fired += self.fired;
        r.refired += self.refired;
        r.late_dropped += self.late_dropped;
    }
}
