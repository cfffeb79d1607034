//! Deduplication in event time: the first occurrence of each key passes; another with the same key
//! less than `horizon` later (in event time) is a duplicate and dropped; one `horizon` or more later
//! passes and starts a new horizon.
//!
//! "First" is by event time, not arrival: a record waits until the watermark (minimum over every
//! input) passes its time, and records are decided in event-time order (equal times: arrival
//! order), so replaying the same input gives the same output whatever the arrival order within the
//! watermark bound. Owns the waiting records (bounded by rate x out-of-orderness) and, per key, the
//! time of the occurrence that passed, forgotten once the horizon is over (bounded by rate x
//! horizon). A record behind the watermark on arrival is late: counted and sent to the late side
//! output if there is one. Records are held by reference and read back when they pass; output is
//! the record as it was read.

use super::rows::{get, put, trim, Keys, RecRef};
use super::{Emitter, JoinStats, Operator, OperatorStats};
use crate::checkpoint::codec::{Dec, Enc};
use crate::event::Event;
use std::collections::BTreeMap;

pub struct Dedupe {
    horizon: i64,
    keys: Keys,
    /// Per key index: the time of the occurrence that passed (i64::MIN: none held).
    passed: Vec<i64>,
    /// Records waiting for the watermark: (time, arrival) -> (key, record).
    waiting: BTreeMap<(i64, u64), (u32, RecRef)>,
    /// When each passed occurrence's horizon ends: (end, key).
    forget: BTreeMap<(i64, u32), ()>,
    arrivals: u64,
    wm: i64,
    stats: OperatorStats,
    /// `[waiting records, keys remembered]`; `cleaned[0]` counts duplicates dropped.
    join: JoinStats,
    /// Per key index: records of the key still waiting.
    waiting_of: Vec<u32>,
    read: Vec<u8>,
    rec: Vec<u8>,
}

impl Dedupe {
    pub fn new(horizon_ms: i64) -> Dedupe {
        Dedupe {
            horizon: horizon_ms.max(0),
            keys: Keys::default(),
            passed: Vec::new(),
            waiting: BTreeMap::new(),
            forget: BTreeMap::new(),
            arrivals: 0,
            wm: i64::MIN,
            stats: OperatorStats::default(),
            join: JoinStats::default(),
            waiting_of: Vec::new(),
            read: Vec::new(),
            rec: Vec::new(),
        }
    }

    fn intern(&mut self, hash: u64, key: &[u8]) -> u32 {
        let (k, new) = self.keys.intern(hash, key);
        if self.passed.len() <= k as usize {
            self.passed.push(i64::MIN);
            self.waiting_of.push(0);
        }
        if new {
            self.passed[k as usize] = i64::MIN;
            self.waiting_of[k as usize] = 0;
        }
        k
    }

    fn wait(&mut self, k: u32, t: i64, rec: RecRef) {
        self.waiting.insert((t, self.arrivals), (k, rec));
        self.arrivals += 1;
        self.waiting_of[k as usize] += 1;
        self.join.buffered[0] += 1;
        self.join.peak[0] = self.join.peak[0].max(self.join.buffered[0]);
    }

    /// Decides the record of key `k` at `t` (every earlier one of the key is decided).
    fn decide(&mut self, k: u32, t: i64, rec: RecRef, out: &mut dyn Emitter) {
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
        self.read.clear();
        out.recall(rec.part, rec.pos, rec.len, &mut self.read);
        self.rec.clear();
        self.rec.extend_from_slice(trim(&self.read));
        self.rec.push(b'\n');
        self.stats.fired += 1;
        out.result(&self.rec);
    }
}

impl Operator for Dedupe {
    fn on_event(&mut self, e: &Event, wm: i64, out: &mut dyn Emitter) {
        self.wm = self.wm.max(wm);
        if e.ts <= self.wm {
            self.stats.late_dropped += 1;
            self.join.late[0] += 1;
            out.late(e);
            return;
        }
        let k = self.intern(e.hash, e.key());
        self.wait(k, e.ts, RecRef::of(e));
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
            let ((t, _), (k, rec)) = entry.remove_entry();
            // Still counted as waiting, so forgetting its key's old horizon keeps the key.
            self.forget_until(t);
            self.join.buffered[0] -= 1;
            self.waiting_of[k as usize] -= 1;
            self.decide(k, t, rec, out);
        }
        self.forget_until(wm);
    }

    fn next_action(&self) -> i64 {
        let w = self.waiting.keys().next().map_or(i64::MAX, |(t, _)| *t);
        let f = self.forget.keys().next().map_or(i64::MAX, |(t, _)| *t);
        w.min(f)
    }

    fn open_windows(&self) -> usize {
        self.waiting.len()
    }

    fn stats(&self) -> OperatorStats {
        self.stats
    }

    fn join_stats(&self) -> Option<JoinStats> {
        let rows = (self.join.buffered[0] + self.join.buffered[1]) as usize;
        Some(JoinStats {
            state_bytes: (rows * 48) as u64 + self.keys.bytes(),
            ..self.join
        })
    }

    fn snapshot(&self, e: &mut Enc) {
        self.stats.encode(e);
        e.u64(self.forget.len() as u64);
        for &(_, k) in self.forget.keys() {
            let (hash, key) = self.keys.get(k).map_or((0, &[][..]), |(h, b)| (*h, b));
            e.u64(hash);
            e.bytes(key);
            e.i64(self.passed[k as usize]);
        }
        e.u64(self.waiting.len() as u64);
        for ((t, _), (k, r)) in &self.waiting {
            let (hash, key) = self.keys.get(*k).map_or((0, &[][..]), |(h, b)| (*h, b));
            e.u64(hash);
            e.bytes(key);
            put(e, *t, r);
        }
    }

    fn restore(&mut self, state: &[u8], keep: &dyn Fn(u64) -> bool, wm: i64) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.wm = self.wm.max(wm);
        self.stats.add_decoded(&mut d)?;
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
        let w = d.count(40, "waiting records")?;
        for _ in 0..w {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let (t, r) = get(&mut d)?;
            if keep(hash) {
                let k = self.intern(hash, key);
                self.wait(k, t, r);
            }
        }
        if !d.is_empty() {
            return Err("bytes after the dedupe state".into());
        }
        Ok(())
    }
}

impl Dedupe {
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

#[cfg(test)]
#[path = "dedupe_tests.rs"]
mod tests;
