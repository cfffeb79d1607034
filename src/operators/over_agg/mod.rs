//! The over aggregate: Flink's OVER aggregation ordered by the time attribute. Every input row
//! comes out once, with aggregates over its frame within its partition added as fields:
//! `ROWS n PRECEDING` (the row and the `n` rows of its partition before it), `RANGE d PRECEDING`
//! (the partition's rows at most `d` older than it, and every row of its own time, which all get
//! the same values), or either unbounded (every earlier row of the partition).
//!
//! As Flink's `RowTime*BoundedPrecedingFunction`s: a row waits until the watermark (minimum over
//! this operator's own inputs) passes its time, then rows are taken in event-time order. A row
//! at or behind the watermark on arrival is late: it gets no result, is counted and goes to the
//! late side output if there is one (Flink drops it silently). Rows of one time and partition
//! are taken in the order of their source positions (a file's line order, a partition's
//! offsets), where Flink takes them as they arrive: the same order for one ordered input, and
//! unlike arrival order, the same on any number of shards. Output is append-only, each row at its
//! own time.
//!
//! State per partition: its accumulators (the window's, `window::aggregate`), and for a bounded
//! frame the values of the rows in it, taken back out as rows leave (MIN and MAX keep every value
//! with its row count, `group_agg::extrema`); plus the rows waiting for the watermark (bounded by
//! rate x out-of-orderness). Partitions are kept forever, as Flink keeps them without a state TTL.

pub mod config;
pub mod plan;
mod state;

use std::collections::VecDeque;

use super::group_agg::extrema::Extrema;
use super::keys::Keys;
use super::rows::{trim, RowId, RowStore, Slab};
use super::timers::{Timer, Timers};
use super::window::aggregate::{to_num, AggLayout, Sketches, Values};
use super::window::plan::AggFunc;
use super::{Counters, Emitter, Operator, Output};
use crate::metrics::OperatorReport;
use crate::record::event::{Event, Rec, RowKind, Value};
use plan::{Frame, OverAggPlan};

/// A row waiting for the watermark.
#[derive(Debug, Clone, Copy)]
struct Pending {
    /// Its event time.
    ts: i64,
    row: RowId,
    /// Its values in the arena.
    vals: u32,
    /// Its source position: the order of rows of one time.
    order: (u16, u64, u64),
}

/// The values of held rows, `stride` per row, in blocks reused once freed.
#[derive(Default)]
struct Arena {
    vals: Vec<Value>,
    free: Vec<u32>,
    stride: usize,
}

impl Arena {
    fn put(&mut self, vals: impl Iterator<Item = Value>) -> u32 {
        if self.stride == 0 {
            return 0;
        }
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.vals.resize(self.vals.len() + self.stride, Value::Null);
                (self.vals.len() / self.stride - 1) as u32
            }
        };
        let at = i as usize * self.stride;
        for (slot, v) in self.vals[at..at + self.stride].iter_mut().zip(vals) {
            *slot = v;
        }
        i
    }

    fn get(&self, i: u32) -> &[Value] {
        let at = i as usize * self.stride;
        &self.vals[at..at + self.stride]
    }

    fn drop_vals(&mut self, i: u32) {
        if self.stride > 0 {
            self.free.push(i);
        }
    }

    fn bytes(&self) -> u64 {
        (self.vals.capacity() * std::mem::size_of::<Value>() + self.free.capacity() * 4) as u64
    }
}

/// A held row's values as the aggregates read them; `back`: taken out of the frame.
struct Held<'a> {
    vals: &'a [Value],
    back: bool,
}

impl Values for Held<'_> {
    fn value(&self, slot: usize) -> Value {
        self.vals.get(slot).copied().unwrap_or(Value::Null)
    }
    fn retracts(&self) -> bool {
        self.back
    }
}

/// Every partition seen: its key, accumulators, frame and progress, by a dense index.
#[derive(Default)]
struct Partitions {
    keys: Keys,
    /// `words` accumulator words per partition.
    accs: Vec<u64>,
    words: usize,
    /// Bounded frames: (time, values) of each partition's rows in its frame, oldest first.
    frames: Vec<VecDeque<(i64, u32)>>,
    /// The time of each partition's last row taken (`i64::MIN`: none yet).
    last: Vec<i64>,
}

impl Partitions {
    /// The index of partition (`hash`, `key`), its state made on first sight.
    fn intern(&mut self, hash: u64, key: &[u8]) -> u32 {
        let (k, _) = self.keys.intern(hash, key);
        let n = self.keys.slots() as usize;
        if self.frames.len() < n {
            self.frames.resize_with(n, VecDeque::new);
            self.accs.resize(n * self.words, 0);
            self.last.resize(n, i64::MIN);
        }
        k
    }

    fn accs(&self, k: u32) -> &[u64] {
        let w = self.words;
        &self.accs[k as usize * w..(k as usize + 1) * w]
    }

    fn bytes(&self) -> u64 {
        let framed: usize = self.frames.iter().map(VecDeque::capacity).sum();
        self.keys.bytes()
            + (self.accs.capacity() * 8 + framed * 16 + self.last.capacity() * 8) as u64
    }
}

pub struct OverAggregate {
    frame: Frame,
    layout: AggLayout,
    parts: Partitions,
    sketches: Sketches,
    /// MIN and MAX over a bounded frame: every value in it, to take one back.
    extrema: Extrema,
    /// The value slot each of `extrema`'s aggregates reads.
    extrema_slots: Vec<usize>,
    arena: Arena,
    pending: Slab<Pending>,
    /// When each waiting row is taken: at its time (`key`: its partition, `tag`: its slot).
    waiting: Timers,
    store: RowStore,
    arrivals: u64,
    wm: i64,
    counters: Counters,
    line: Vec<u8>,
    due: Vec<Timer>,
    /// The rows taken at one watermark step, in (time, source position) order.
    peers: Vec<(u32, Pending)>,
}

impl OverAggregate {
    pub fn new(plan: &OverAggPlan) -> OverAggregate {
        let layout = AggLayout::new(&plan.aggregates);
        let stride = (plan.aggregates.iter())
            .filter_map(|a| a.slot)
            .max()
            .map_or(0, |s| s + 1);
        let mut specs = Vec::new();
        let mut extrema_slots = Vec::new();
        for (i, a) in plan.aggregates.iter().enumerate() {
            if let (true, AggFunc::Min | AggFunc::Max, Some(slot)) =
                (plan.frame.bounded(), a.func, a.slot)
            {
                specs.push((i, layout.at(i), a.func == AggFunc::Max));
                extrema_slots.push(slot);
            }
        }
        OverAggregate {
            frame: plan.frame,
            parts: Partitions {
                words: layout.words(),
                ..Partitions::default()
            },
            layout,
            sketches: Sketches::default(),
            extrema: Extrema::new(specs),
            extrema_slots,
            arena: Arena {
                stride,
                ..Arena::default()
            },
            pending: Slab::default(),
            waiting: Timers::default(),
            store: RowStore::default(),
            arrivals: 0,
            wm: i64::MIN,
            counters: Counters::default(),
            line: Vec::new(),
            due: Vec::new(),
            peers: Vec::new(),
        }
    }

    /// The index of partition (`hash`, `key`), its state made on first sight.
    /// Holds a row of partition `k` at `t` (`vals`: its values, already in the arena) until the
    /// watermark passes it, or, behind the watermark already (a bounded frame takes such a row
    /// while its partition has taken no later one), until the watermark's next step, as Flink.
    fn wait(&mut self, k: u32, t: i64, row: &[u8], vals: u32, order: (u16, u64, u64)) {
        let at = t.max(self.wm.saturating_add(1));
        self.hold(k, t, at, row, vals, order);
    }

    /// Holds a row at `t` until the watermark reaches `at`.
    fn hold(&mut self, k: u32, t: i64, at: i64, row: &[u8], vals: u32, order: (u16, u64, u64)) {
        let p = Pending {
            ts: t,
            row: self.store.put(row),
            vals,
            order,
        };
        let slot = self.pending.insert(p);
        self.waiting.push(Timer {
            at,
            id: self.arrivals,
            key: k,
            tag: slot,
        });
        self.arrivals += 1;
    }

    /// Adds (or, `back`, takes out) the values `vals` to partition `k`'s accumulators.
    fn apply(&mut self, k: u32, vals: u32, back: bool) {
        let accs = self.parts.accs.as_mut_slice();
        let w = self.parts.words;
        let accs = &mut accs[k as usize * w..(k as usize + 1) * w];
        let vals = self.arena.get(vals);
        (self.layout).update(accs, &Held { vals, back }, &mut self.sketches);
        if self.extrema.is_empty() {
            return;
        }
        let (hash, key) = self.parts.keys.get(k).unwrap_or((0, &[]));
        for (s, &slot) in self.extrema_slots.iter().enumerate() {
            if let Some(n) = vals.get(slot).copied().and_then(to_num) {
                (self.extrema).apply(k as usize, s, (hash, key), n, back, accs);
            }
        }
    }

    /// Takes the oldest row out of partition `k`'s frame.
    fn evict_front(&mut self, k: u32) {
        if let Some((_, vals)) = self.parts.frames[k as usize].pop_front() {
            self.apply(k, vals, true);
            self.arena.drop_vals(vals);
        }
    }

    /// Adds a row of partition `k` at `t` to its frame; a ROWS frame then lets its oldest go.
    fn enter(&mut self, k: u32, t: i64, vals: u32) {
        self.apply(k, vals, false);
        match self.frame {
            Frame::Rows(Some(n)) => {
                self.parts.frames[k as usize].push_back((t, vals));
                if self.parts.frames[k as usize].len() as u64 > n.saturating_add(1) {
                    self.evict_front(k);
                }
            }
            Frame::Range(Some(_)) => self.parts.frames[k as usize].push_back((t, vals)),
            Frame::Rows(None) | Frame::Range(None) => self.arena.drop_vals(vals),
        }
    }

    /// A RANGE frame at `t`: takes out partition `k`'s rows older than `t - d`.
    fn evict_before(&mut self, k: u32, t: i64) {
        let Frame::Range(Some(d)) = self.frame else {
            return;
        };
        let limit = t.saturating_sub(d);
        while self.parts.frames[k as usize]
            .front()
            .is_some_and(|&(ts, _)| ts < limit)
        {
            self.evict_front(k);
        }
    }

    /// Emits the row `p` of partition `k` at `t` with the partition's aggregates as they stand.
    fn emit(&mut self, k: u32, t: i64, p: Pending, out: &mut dyn Emitter) {
        let accs = self.parts.accs(k);
        let row = trim(self.store.get(p.row));
        let line = &mut self.line;
        line.clear();
        let body = row.strip_suffix(b"}").unwrap_or(b"{");
        line.extend_from_slice(body);
        let empty = trim(body.get(1..).unwrap_or_default()).is_empty();
        let at = line.len();
        self.layout.write_fields(accs, &self.sketches, line);
        if empty && line.get(at) == Some(&b',') {
            line.remove(at);
        }
        line.extend_from_slice(b"}\n");
        self.counters.fired += 1;
        let hash = self.parts.keys.get(k).map_or(0, |(h, _)| h);
        out.emit(Output {
            line,
            ts: t,
            cause: None,
            key: hash,
            kind: RowKind::Insert,
        });
        self.store.drop_row(p.row);
    }

    /// Takes the due rows of one time `t` (in source order), adding each to its partition's
    /// frame and emitting it: one by one for ROWS, all of them before any is emitted for RANGE.
    fn take(&mut self, t: i64, run: &[(u32, Pending)], out: &mut dyn Emitter) {
        for &(k, _) in run {
            self.parts.last[k as usize] = t;
        }
        match self.frame {
            Frame::Rows(_) => {
                for &(k, p) in run {
                    self.enter(k, t, p.vals);
                    self.emit(k, t, p, out);
                }
            }
            Frame::Range(_) => {
                for &(k, p) in run {
                    self.evict_before(k, t);
                    self.enter(k, t, p.vals);
                }
                for &(k, p) in run {
                    self.emit(k, t, p, out);
                }
            }
        }
    }

    /// Whether a row of partition `k` at `t` comes too late: as Flink, behind the watermark for
    /// an unbounded frame, and for a bounded one at or behind the last row its partition took.
    fn late(&self, k: u32, t: i64) -> bool {
        if self.frame.bounded() {
            t <= self.parts.last[k as usize]
        } else {
            t <= self.wm
        }
    }
}

impl Operator for OverAggregate {
    fn on_event(&mut self, r: &Rec<'_>, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        let e = r.ev;
        let k = self.parts.intern(e.hash, r.key());
        if self.late(k, e.ts) {
            self.counters.late_dropped += 1;
            out.late(r);
            return;
        }
        let n = self.arena.stride;
        let vals = self.arena.put((0..n).map(|s| r.value(s)));
        let row = r.row().unwrap_or(b"{}");
        self.wait(k, e.ts, row, vals, (e.part, e.pos, e.sub));
    }

    fn prefetch(&self, ev: &Event, stage: u8) {
        self.parts.keys.prefetch(ev.hash, stage);
    }

    fn on_watermark(&mut self, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        self.waiting.take_due(wm, &mut due);
        // Rows held past their time (see `wait`) come due with later ones: in time order again.
        let mut peers = std::mem::take(&mut self.peers);
        peers.clear();
        peers.extend(due.iter().map(|x| (x.key, self.pending.remove(x.tag))));
        peers.sort_by_key(|(_, p)| (p.ts, p.order));
        for run in peers.chunk_by(|a, b| a.1.ts == b.1.ts) {
            self.take(run[0].1.ts, run, out);
        }
        self.peers = peers;
        self.due = due;
    }

    fn next_action(&self) -> i64 {
        self.waiting.next()
    }

    fn snapshot(&self, e: &mut crate::checkpoint::codec::Enc) {
        self.encode(e);
    }

    fn restore(&mut self, state: &[u8], keep: &dyn Fn(u64) -> bool, wm: i64) -> Result<(), String> {
        self.wm = self.wm.max(wm);
        self.decode(state, keep)
    }

    fn report(&self, r: &mut OperatorReport) {
        self.counters.report(r);
        r.open += self.waiting.len() as u64;
        r.keys += self.parts.keys.len() as u64;
        r.state_bytes += self.parts.bytes()
            + self.sketches.bytes() as u64
            + self.extrema.bytes() as u64
            + self.arena.bytes()
            + self.pending.bytes()
            + self.waiting.bytes()
            + self.store.bytes().1;
    }
}

#[cfg(test)]
mod tests;
