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

use super::rows::{get, put, trim, Keys, RowId, RowStore};
use super::{Counters, Emitter, Operator, Output};
use crate::checkpoint::codec::{Dec, Enc};
use crate::event::{Rec, NULL_KEY};
use crate::metrics::{JoinStats, OperatorReport};
use crate::plan::DedupePlan;
use std::collections::BTreeMap;

/// The key index of waiting records whose key is null (never interned).
const NULL: u32 = u32::MAX;

pub struct Dedupe {
    horizon: i64,
    keys: Keys,
    /// Per key index: the time of the occurrence that passed (i64::MIN: none held).
    passed: Vec<i64>,
    /// Records waiting for the watermark: (time, arrival) -> (key, hash, record).
    waiting: BTreeMap<(i64, u64), (u32, u64, RowId)>,
    store: RowStore,
    /// When each passed occurrence's horizon ends: (end, key).
    forget: BTreeMap<(i64, u32), ()>,
    arrivals: u64,
    wm: i64,
    counters: Counters,
    /// `[waiting records, keys remembered]`; `cleaned[0]` counts duplicates dropped.
    join: JoinStats,
    /// Per key index: records of the key still waiting.
    waiting_of: Vec<u32>,
    rec: Vec<u8>,
}

impl Dedupe {
    pub fn new(plan: &DedupePlan) -> Dedupe {
        Dedupe {
            horizon: plan.horizon_ms.max(0),
            keys: Keys::default(),
            passed: Vec::new(),
            waiting: BTreeMap::new(),
            store: RowStore::default(),
            forget: BTreeMap::new(),
            arrivals: 0,
            wm: i64::MIN,
            counters: Counters::default(),
            join: JoinStats::default(),
            waiting_of: Vec::new(),
            rec: Vec::new(),
        }
    }

    fn intern(&mut self, hash: u64, key: &[u8]) -> u32 {
        let (k, new) = self.keys.intern(hash, key);
        while self.passed.len() <= k as usize {
            self.passed.push(i64::MIN);
            self.waiting_of.push(0);
        }
        if new {
            self.passed[k as usize] = i64::MIN;
            self.waiting_of[k as usize] = 0;
        }
        k
    }

    fn wait(&mut self, k: u32, hash: u64, t: i64, row: &[u8]) {
        let row = self.store.put(row);
        self.waiting.insert((t, self.arrivals), (k, hash, row));
        self.arrivals += 1;
        if k != NULL {
            self.waiting_of[k as usize] += 1;
        }
        self.join.buffered[0] += 1;
        self.join.peak[0] = self.join.peak[0].max(self.join.buffered[0]);
    }

    /// Decides the record of key `k` at `t` (every earlier one of the key is decided).
    fn decide(&mut self, k: u32, hash: u64, t: i64, row: RowId, out: &mut dyn Emitter) {
        if k != NULL {
            let last = self.passed[k as usize];
            if last != i64::MIN && t.saturating_sub(last) < self.horizon {
                self.join.cleaned[0] += 1;
                return;
            }
            if last != i64::MIN {
                self.forget.remove(&(last.saturating_add(self.horizon), k));
            } else {
                self.join.buffered[1] += 1;
                self.join.peak[1] = self.join.peak[1].max(self.join.buffered[1]);
            }
            self.passed[k as usize] = t;
            self.forget.insert((t.saturating_add(self.horizon), k), ());
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
            retract: false,
        });
    }

    /// Forgets every passed occurrence whose horizon ended at or before `t`.
    fn forget_until(&mut self, t: i64) {
        while let Some(entry) = self.forget.first_entry() {
            if entry.key().0 > t {
                break;
            }
            let ((_, k), ()) = entry.remove_entry();
            self.passed[k as usize] = i64::MIN;
            self.join.buffered[1] -= 1;
            if self.waiting_of[k as usize] == 0 {
                self.keys.remove(k);
            }
        }
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
        let k = self.intern(e.hash, r.key());
        self.wait(k, e.hash, e.ts, row);
    }

    fn on_watermark(&mut self, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        // Forget horizons that ended before the next record to decide: it passes anyway.
        let next = self.waiting.keys().next().map_or(wm, |(t, _)| (*t).min(wm));
        self.forget_until(next);
        while let Some(entry) = self.waiting.first_entry() {
            if entry.key().0 > wm {
                break;
            }
            let ((t, _), (k, hash, row)) = entry.remove_entry();
            // Still counted as waiting, so forgetting its key's old horizon keeps the key.
            self.forget_until(t);
            self.join.buffered[0] -= 1;
            if k != NULL {
                self.waiting_of[k as usize] -= 1;
            }
            self.decide(k, hash, t, row, out);
            self.store.drop_row(row);
        }
        self.forget_until(wm);
    }

    fn next_action(&self) -> i64 {
        let w = self.waiting.keys().next().map_or(i64::MAX, |(t, _)| *t);
        let f = self.forget.keys().next().map_or(i64::MAX, |(t, _)| *t);
        w.min(f)
    }

    fn report(&self, r: &mut OperatorReport) {
        self.counters.report(r);
        let rows = self.join.buffered[0] + self.join.buffered[1];
        let state = rows * 48 + self.keys.bytes() + self.store.bytes().1;
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
        e.u64(self.forget.len() as u64);
        for &(_, k) in self.forget.keys() {
            let (hash, key) = self.keys.get(k).unwrap_or((0, &[]));
            e.u64(hash);
            e.bytes(key);
            e.i64(self.passed[k as usize]);
        }
        e.u64(self.waiting.len() as u64);
        for ((t, _), (k, hash, r)) in &self.waiting {
            let key = if *k == NULL {
                None
            } else {
                self.keys.get(*k).map(|(_, b)| b)
            };
            e.u64(*hash);
            e.u8(u8::from(key.is_none()));
            e.bytes(key.unwrap_or_default());
            put(e, *t, self.store.get(*r));
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
                let k = self.intern(hash, key);
                if self.passed[k as usize] != i64::MIN {
                    return Err("a dedupe key appears twice".into());
                }
                self.passed[k as usize] = t;
                self.forget.insert((t.saturating_add(self.horizon), k), ());
                self.join.buffered[1] += 1;
            }
        }
        let w = d.count(33, "waiting records")?;
        for _ in 0..w {
            let hash = d.u64("key hash")?;
            let null = d.u8("null key")? == 1;
            let key = d.bytes("key")?;
            let (t, r) = get(&mut d)?;
            if keep(hash) {
                let k = if null { NULL } else { self.intern(hash, key) };
                self.wait(k, hash, t, r);
            }
        }
        if !d.is_empty() {
            return Err("bytes after the dedupe state".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
