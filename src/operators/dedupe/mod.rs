//! Deduplication in event time: the first occurrence of each key passes; another with the same key
//! less than `horizon` later (in event time) is a duplicate and dropped; one `horizon` or more later
//! passes and starts a new horizon.
//!
//! "First" is by event time, not arrival: a record waits until the watermark (minimum over this
//! operator's own inputs) passes its time, and records are decided in event-time order (equal
//! times: arrival order), so replaying the same input gives the same output whatever the arrival
//! order within the watermark bound. Owns the waiting records by value (bounded by rate x
//! out-of-orderness) and, per key, the time of the occurrence that passed, forgotten once the
//! horizon is over (bounded by rate x horizon). A record behind the watermark on arrival is late:
//! counted and sent to the late side output if there is one. A record whose key is missing or null
//! is never a duplicate of anything (SQL NULL): it passes, in its turn. Output is the record as it
//! was read, with its own event time.

pub mod config;
pub mod plan;

use super::keys::Keys;
use super::rows::{get, put, trim, RowId, RowStore, Slab, PREFETCH_AHEAD};
use super::timers::{Timer, Timers};
use super::{Counters, Emitter, Operator, Output};
use crate::checkpoint::codec::{Dec, Enc};
use crate::metrics::{JoinStats, OperatorReport};
use crate::plan::DedupePlan;
use crate::record::event::{Event, Rec, RowKind, NULL_KEY};
use std::collections::VecDeque;

/// The key index of waiting records whose key is null (never interned).
const NULL: u32 = u32::MAX;

/// What dedupe keeps per key, in the key's slot.
#[derive(Debug, Clone, Copy)]
struct KeyState {
    /// The time of the occurrence that passed (i64::MIN: none remembered).
    passed: i64,
    /// Records of the key still waiting.
    waiting: u32,
}

impl Default for KeyState {
    fn default() -> KeyState {
        KeyState {
            passed: i64::MIN,
            waiting: 0,
        }
    }
}

pub struct Dedupe {
    horizon: i64,
    keys: Keys<KeyState>,
    /// Records waiting for the watermark, by slot: (hash, record).
    pending: Slab<(u64, RowId)>,
    /// When each waiting record is decided: at its time, in arrival order (`key`: its key,
    /// `tag`: its slot).
    waiting: Timers,
    store: RowStore,
    /// (end of horizon, key) of each passed occurrence, in the order they passed. Records are
    /// decided in event-time order (a waiting one is later than every decided one, or it would be
    /// late), so ends only grow: a queue, not a timer set.
    forget: VecDeque<(i64, u32)>,
    arrivals: u64,
    wm: i64,
    counters: Counters,
    /// `[waiting records, keys remembered]`; `cleaned[0]` counts duplicates dropped.
    join: JoinStats,
    rec: Vec<u8>,
    /// The buffer for due timers, kept to reuse.
    due: Vec<Timer>,
}

impl Dedupe {
    pub fn new(plan: &DedupePlan) -> Dedupe {
        Dedupe {
            horizon: plan.horizon_ms.max(0),
            keys: Keys::default(),
            pending: Slab::default(),
            waiting: Timers::default(),
            store: RowStore::default(),
            forget: VecDeque::new(),
            arrivals: 0,
            wm: i64::MIN,
            counters: Counters::default(),
            join: JoinStats::default(),
            rec: Vec::new(),
            due: Vec::new(),
        }
    }

    fn wait(&mut self, k: u32, hash: u64, t: i64, row: &[u8]) {
        let held = (hash, self.store.put(row));
        let slot = self.pending.insert(held);
        self.waiting.push(Timer {
            at: t,
            id: self.arrivals,
            key: k,
            tag: slot,
        });
        self.arrivals += 1;
        if k != NULL {
            self.keys.value_mut(k).waiting += 1;
        }
        self.join.buffered[0] += 1;
        self.join.peak[0] = self.join.peak[0].max(self.join.buffered[0]);
    }

    /// Remembers that key `k` passed at `t`, until its horizon ends.
    fn remember(&mut self, k: u32, t: i64) {
        let s = self.keys.value_mut(k);
        if s.passed == i64::MIN {
            self.join.buffered[1] += 1;
            self.join.peak[1] = self.join.peak[1].max(self.join.buffered[1]);
        }
        // Passing again at the same time (a zero horizon) keeps its one entry.
        if s.passed != t {
            s.passed = t;
            self.forget.push_back((t.saturating_add(self.horizon), k));
        }
    }

    /// Decides the record of key `k` at `t` (every earlier one of the key is decided).
    fn decide(&mut self, k: u32, hash: u64, t: i64, row: RowId, out: &mut dyn Emitter) {
        if k != NULL {
            let last = self.keys.value(k).passed;
            if last != i64::MIN && t.saturating_sub(last) < self.horizon {
                self.join.cleaned[0] += 1;
                return;
            }
            self.remember(k, t);
        }
        self.rec.clear();
        self.rec.extend_from_slice(trim(self.store.get(row)));
        self.rec.push(b'\n');
        self.counters.fired += 1;
        out.emit(Output {
            line: &self.rec,
            ts: t,
            cause: None,
            key: hash,
            kind: RowKind::Insert,
        });
    }

    /// Forgets every passed occurrence whose horizon ended at or before `t`.
    fn forget_until(&mut self, t: i64) {
        while let Some(&(end, k)) = self.forget.front() {
            if end > t {
                return;
            }
            // The keys to forget are known ahead: overlap their cache misses.
            if let Some(&(_, a)) = self.forget.get(PREFETCH_AHEAD) {
                self.keys.prefetch_slot(a);
            }
            if let Some(&(_, a)) = self.forget.get(PREFETCH_AHEAD / 2) {
                self.keys.prefetch_removal(a);
            }
            self.forget.pop_front();
            // A key that passed again since has a later entry: this one is stale.
            if !self.is_current(end, k) {
                continue;
            }
            let s = self.keys.value_mut(k);
            s.passed = i64::MIN;
            self.join.buffered[1] -= 1;
            if s.waiting == 0 {
                self.keys.remove(k);
            }
        }
    }

    /// Whether the entry (`end`, `k`) of the forget queue is its key's current horizon.
    fn is_current(&self, end: i64, k: u32) -> bool {
        let passed = self.keys.value(k).passed;
        self.keys.get(k).is_some()
            && passed != i64::MIN
            && passed.saturating_add(self.horizon) == end
    }
}

impl Operator for Dedupe {
    fn on_event(&mut self, r: &Rec<'_>, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        let e = r.ev;
        if e.ts <= self.wm {
            self.counters.late_dropped += 1;
            self.join.late[0] += 1;
            out.late(r);
            return;
        }
        let row = r.row().unwrap_or(b"{}");
        if e.flags & NULL_KEY != 0 {
            self.join.null_keys += 1;
            self.wait(NULL, e.hash, e.ts, row);
            return;
        }
        let (k, _) = self.keys.intern(e.hash, r.key());
        self.wait(k, e.hash, e.ts, row);
    }

    fn prefetch(&self, ev: &Event, stage: u8) {
        if ev.flags & NULL_KEY == 0 {
            self.keys.prefetch(ev.hash, stage);
        }
    }

    fn on_watermark(&mut self, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        self.waiting.take_due(wm, &mut due);
        for (i, timer) in due.iter().enumerate() {
            if let Some(a) = due.get(i + PREFETCH_AHEAD) {
                self.pending.prefetch(a.tag);
                if a.key != NULL {
                    self.keys.prefetch_slot(a.key);
                }
            }
            // Forget horizons that ended before this record: it passes anyway. It still counts as
            // waiting, so forgetting its key's old horizon keeps the key.
            self.forget_until(timer.at);
            let (k, slot) = (timer.key, timer.tag);
            let (hash, row) = self.pending.remove(slot);
            self.join.buffered[0] -= 1;
            if k != NULL {
                self.keys.value_mut(k).waiting -= 1;
            }
            self.decide(k, hash, timer.at, row, out);
            self.store.drop_row(row);
        }
        self.due = due;
        self.forget_until(wm);
    }

    fn next_action(&self) -> i64 {
        (self.waiting.next()).min(self.forget.front().map_or(i64::MAX, |f| f.0))
    }

    fn report(&self, r: &mut OperatorReport) {
        self.counters.report(r);
        let rows = self.join.buffered[0] + self.join.buffered[1];
        // Allocated, not live: none of these shrink, so this is the high-water mark.
        let state = self.pending.bytes()
            + self.waiting.bytes()
            + (self.forget.capacity() * 16) as u64
            + self.keys.bytes()
            + self.store.bytes().1;
        r.open += self.waiting.len() as u64;
        r.keys += rows;
        r.state_bytes += state;
        r.rows.get_or_insert_with(Default::default).add(&JoinStats {
            state_bytes: state,
            ..self.join
        });
    }

    fn snapshot(&self, e: &mut Enc) {
        self.counters.encode(e);
        let remembered: Vec<u32> = (self.forget.iter())
            .filter(|&&(end, k)| self.is_current(end, k))
            .map(|&(_, k)| k)
            .collect();
        e.u64(remembered.len() as u64);
        for k in remembered {
            let (hash, key) = self.keys.get(k).unwrap_or((0, &[]));
            e.u64(hash);
            e.bytes(key);
            e.i64(self.keys.value(k).passed);
        }
        let waiting = self.waiting.sorted();
        e.u64(waiting.len() as u64);
        for t in waiting {
            let key = if t.key == NULL {
                None
            } else {
                self.keys.get(t.key).map(|(_, b)| b)
            };
            let (hash, r) = *self.pending.get(t.tag).unwrap_or(&(0, RowId::default()));
            e.u64(hash);
            e.u8(u8::from(key.is_none()));
            e.bytes(key.unwrap_or_default());
            put(e, t.at, self.store.get(r));
        }
    }

    fn restore(&mut self, state: &[u8], keep: &dyn Fn(u64) -> bool, wm: i64) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.wm = self.wm.max(wm);
        self.counters.add_decoded(&mut d)?;
        let n = d.count(24, "remembered keys")?;
        for _ in 0..n {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let t = d.i64("passed at")?;
            if keep(hash) {
                let (k, _) = self.keys.intern(hash, key);
                if self.keys.value(k).passed != i64::MIN {
                    return Err("a dedupe key appears twice".into());
                }
                self.remember(k, t);
            }
        }
        let w = d.count(33, "waiting records")?;
        for _ in 0..w {
            let hash = d.u64("key hash")?;
            let null = d.u8("null key")? == 1;
            let key = d.bytes("key")?;
            let (t, r) = get(&mut d)?;
            if keep(hash) {
                let k = if null {
                    NULL
                } else {
                    self.keys.intern(hash, key).0
                };
                self.wait(k, hash, t, r);
            }
        }
        if !d.is_empty() {
            return Err("bytes after the dedupe state".into());
        }
        // States of several shards restored into one each keep their order, but not together.
        self.forget.make_contiguous().sort_by_key(|&(end, _)| end);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
