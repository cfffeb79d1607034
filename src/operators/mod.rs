//! Operators: per-shard, single-threaded event processors driven by the runtime.
//!
//! An operator sees events already routed to the shard that owns their key, together with the exact
//! event-time watermark (see `time`). It owns all state for its keys and never sees threads, rings,
//! sources or sinks: results leave through an [`Emitter`]. The runtime knows operators only through
//! the [`Operator`] trait, never a window by name.

pub mod dedupe;
pub mod interval_join;
pub mod record;
pub mod rows;
pub mod temporal_join;
pub mod window;

use crate::checkpoint::codec::{Dec, Enc};
use crate::event::Event;
use crate::time::ChunkTime;

/// Where an operator's output goes. Called per emitted result, never per input event.
pub trait Emitter {
    /// One result line (a complete JSON object followed by `\n`).
    fn result(&mut self, line: &[u8]);
    /// An event too late for every window it belongs to: goes to the late side output, if any.
    fn late(&mut self, event: &Event);
    /// Appends the raw record at (`part`, `pos`, `len`) of the input, as read from its source
    /// (operators that output whole records keep only where they are).
    fn recall(&mut self, _part: u16, _pos: u64, _len: u32, _out: &mut Vec<u8>) {}
}

/// Counters an operator keeps; plain integers owned by the shard.
#[derive(Debug, Default, Clone, Copy)]
pub struct OperatorStats {
    /// Result lines emitted when the watermark passed a window's end.
    pub fired: u64,
    /// Result lines emitted again because an event arrived within the allowed lateness.
    pub refired: u64,
    /// Events dropped from every window for lateness (each also goes to the late output if configured).
    pub late_dropped: u64,
}

impl OperatorStats {
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
}

/// What a join (or dedupe) holds, per side (0 left or input, 1 right or table): rows buffered now
/// and at most, rows dropped by cleanup once no match was possible, rows late on arrival.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct JoinStats {
    pub buffered: [u64; 2],
    pub peak: [u64; 2],
    pub cleaned: [u64; 2],
    pub late: [u64; 2],
    /// Approximate bytes of state held now (rows, timers and key index).
    pub state_bytes: u64,
}

impl JoinStats {
    pub fn add(&mut self, o: &JoinStats) {
        for i in 0..2 {
            self.buffered[i] += o.buffered[i];
            self.peak[i] += o.peak[i];
            self.cleaned[i] += o.cleaned[i];
            self.late[i] += o.late[i];
        }
        self.state_bytes += o.state_bytes;
    }
}

pub trait Operator: Send {
    /// Processes one event. `wm` is the operator watermark at its arrival; `on_watermark(wm)` has
    /// already been called with it.
    fn on_event(&mut self, event: &Event, wm: i64, out: &mut dyn Emitter);

    /// Processes a leading part of a run of events of one chunk, in order, and returns how many
    /// (at least one). The watermark at the arrival of each event `e` is `time.before(e.seen_max)`
    /// (never decreasing along the run), and at the first event it is below `next_action()`. The
    /// operator must stop before the first event whose watermark reaches its `next_action()` as it
    /// stands after the events before it (processing may create new timers), so the runtime can
    /// call `on_watermark` there. Must give exactly what `on_event` per event gives; an operator
    /// overrides it to work through the run faster (prefetching later events' state, hoisting
    /// per-event checks).
    fn on_run(&mut self, events: &[Event], time: &ChunkTime, out: &mut dyn Emitter) -> usize {
        for (i, e) in events.iter().enumerate() {
            let wm = time.before(e.seen_max);
            if i > 0 && wm >= self.next_action() {
                return i;
            }
            self.on_event(e, wm, out);
        }
        events.len()
    }

    /// Phase two of a combined aggregate: merges the partial accumulators `payload` (encoded by
    /// `window::combine`) of key and pane `head`, at watermark `wm`, at which every window of the
    /// pane is still open. Only windows with `hot_keys` receive them.
    fn on_partial(&mut self, _head: &Event, _payload: &[u8], _wm: i64) -> Result<(), String> {
        Err("this operator does not take partial aggregates".into())
    }

    /// Appends this operator's whole state (every key it holds, its firing progress and counters)
    /// for a checkpoint; `restore` reads it back.
    fn snapshot(&self, out: &mut Enc);

    /// Adds the keys of one snapshot (as `snapshot` wrote it) that `keep(key hash)` selects. `wm` is
    /// the watermark the snapshot was taken at. Called once per snapshot read: after a rescale a
    /// shard reads every old shard's snapshot and keeps its own key groups.
    fn restore(&mut self, state: &[u8], keep: &dyn Fn(u64) -> bool, wm: i64) -> Result<(), String>;

    /// The watermark advanced to `wm` (strictly increasing between calls).
    fn on_watermark(&mut self, _wm: i64, _out: &mut dyn Emitter) {}
    /// The earliest watermark at which `on_watermark` would do anything; the runtime may skip calls
    /// below it.
    fn next_action(&self) -> i64 {
        i64::MIN
    }
    /// Windows (or sessions) still holding state.
    fn open_windows(&self) -> usize {
        0
    }
    fn stats(&self) -> OperatorStats {
        OperatorStats::default()
    }
    /// Rows a join or dedupe holds (None for windows).
    fn join_stats(&self) -> Option<JoinStats> {
        None
    }
    /// (keys or rows held, approximate bytes of state): for the metrics endpoint, read every
    /// publish (0.1 s), so it must be cheap. Joins and dedupe report their buffered rows.
    fn state_size(&self) -> (u64, u64) {
        self.join_stats()
            .map_or((0, 0), |j| (j.buffered[0] + j.buffered[1], j.state_bytes))
    }
}
