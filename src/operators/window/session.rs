//! Session windows: per key, sessions `[first_ts, last_ts + gap)` that merge when they touch.
//!
//! Merging follows Flink's `MergingWindowSet`: windows merge when they intersect *or touch*
//! (`a.start <= b.end && a.end >= b.start`), lateness is judged on the merged window (so a late event
//! that extends a still-open session is accepted), and a merged window whose end has already passed
//! the watermark fires at once. Timers sit in a min-heap and are validated lazily when popped, so a
//! merge never has to search the heap. When a consumer aggregates the results further, a fired
//! session that takes a late event (re-fired, or merged into a larger one) first withdraws what
//! it emitted: a retraction of its previous result, sent on that event's arrival.

use super::aggregate::{AggLayout, Sketches};
use super::format::LineFormat;
use crate::checkpoint::codec::{Dec, Enc};
use crate::metrics::OperatorReport;
use crate::operators::{Counters, Emitter, Operator, Output};
use crate::record::event::{Event, Rec, RowKind};
use crate::time::WM_MAX;
use hashbrown::HashTable;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

struct Session {
    start: i64,
    end: i64,
    fired: bool,
    /// Accumulator words (see `aggregate`) and their `count_distinct` sketches.
    accs: Box<[u64]>,
    sketches: Sketches,
}

struct KeyState {
    hash: u64,
    key: Box<[u8]>,
    sessions: Vec<Session>,
}

impl KeyState {
    fn key(&self) -> &[u8] {
        &self.key
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum TimerKind {
    Fire,
    Cleanup,
}

pub struct SessionWindows {
    gap: i64,
    lateness: i64,
    layout: AggLayout,
    format: LineFormat,
    index: HashTable<u32>,
    keys: Vec<KeyState>,
    free: Vec<u32>,
    /// (time, kind, key index, session start)
    timers: BinaryHeap<Reverse<(i64, TimerKind, u32, i64)>>,
    sessions: usize,
    line: Vec<u8>,
    stats: Counters,
}

impl SessionWindows {
    pub fn new(gap: i64, lateness: i64, layout: AggLayout, format: LineFormat) -> Self {
        SessionWindows {
            gap,
            lateness,
            layout,
            format,
            index: HashTable::new(),
            keys: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            sessions: 0,
            line: Vec::with_capacity(256),
            stats: Counters::default(),
        }
    }

    fn key_index(&mut self, hash: u64, key: &[u8]) -> u32 {
        let keys = &self.keys;
        if let Some(&i) = self.index.find(hash, |&i| {
            let k = &keys[i as usize];
            k.hash == hash && k.key() == key
        }) {
            return i;
        }
        let state = KeyState {
            hash,
            key: Box::from(key),
            sessions: Vec::new(),
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.keys[i as usize] = state;
                i
            }
            None => {
                self.keys.push(state);
                (self.keys.len() - 1) as u32
            }
        };
        let keys = &self.keys;
        self.index
            .insert_unique(hash, i, |&j| keys[j as usize].hash);
        i
    }

    /// Emits session `si` of key `ki`: fired by the watermark, or by the arrival of `cause`; with
    /// `retract`, as the withdrawal of what it emitted before.
    fn emit(
        &mut self,
        ki: u32,
        si: usize,
        cause: Option<&Event>,
        retract: bool,
        out: &mut dyn Emitter,
    ) {
        let k = &self.keys[ki as usize];
        let s = &k.sessions[si];
        self.line.clear();
        self.format.write(
            k.key(),
            (s.start, s.end),
            &self.layout,
            &s.accs,
            &s.sketches,
            &mut self.line,
        );
        out.emit(Output {
            line: &self.line,
            ts: s.end - 1,
            cause,
            key: k.hash,
            // A withdrawn session never comes back under its window_start: a delete.
            kind: if retract {
                RowKind::Delete
            } else {
                RowKind::Insert
            },
        });
    }

    fn schedule(&mut self, ki: u32, start: i64, end: i64, wm: i64) {
        if end - 1 > wm {
            self.timers
                .push(Reverse((end - 1, TimerKind::Fire, ki, start)));
        }
        self.timers.push(Reverse((
            (end - 1).saturating_add(self.lateness),
            TimerKind::Cleanup,
            ki,
            start,
        )));
    }

    fn drop_key_if_empty(&mut self, ki: u32) {
        let k = &self.keys[ki as usize];
        if !k.sessions.is_empty() {
            return;
        }
        let (hash, key) = (k.hash, k.key().to_vec());
        let keys = &self.keys;
        if let Ok(entry) = self.index.find_entry(hash, |&i| {
            let k = &keys[i as usize];
            k.hash == hash && k.key() == key.as_slice()
        }) {
            entry.remove();
        }
        self.free.push(ki);
    }
}

impl Operator for SessionWindows {
    fn on_event(&mut self, rec: &Rec<'_>, wm: i64, out: &mut dyn Emitter) {
        let ev = rec.ev;
        let mut start = ev.ts;
        let mut end = ev.ts.saturating_add(self.gap);
        let ki = self.key_index(ev.hash, rec.key());
        let sessions = &self.keys[ki as usize].sessions;
        // Sessions are disjoint and not touching, so one pass finds the whole merged extent.
        let mut merging: Vec<usize> = Vec::new();
        for (i, s) in sessions.iter().enumerate() {
            if s.start <= end && s.end >= start {
                merging.push(i);
                start = start.min(s.start);
                end = end.max(s.end);
            }
        }
        if (end - 1).saturating_add(self.lateness) <= wm {
            self.stats.late_dropped += 1;
            out.late(rec);
            self.drop_key_if_empty(ki);
            return;
        }
        if out.wants_retractions() {
            // A fired session that takes this event (alone, or merged with others) no longer
            // stands as emitted: its result is withdrawn now, before the new one (at once if the
            // merged session is due, else when it fires).
            for &i in &merging {
                if self.keys[ki as usize].sessions[i].fired {
                    self.emit(ki, i, Some(ev), true, out);
                }
            }
        }
        let layout = &self.layout;
        let k = &mut self.keys[ki as usize];
        let mut was_fired = false;
        let mut merged: Option<(Box<[u64]>, Sketches)> = None;
        for &i in merging.iter().rev() {
            let s = k.sessions.swap_remove(i);
            was_fired |= s.fired;
            match merged.as_mut() {
                None => merged = Some((s.accs, s.sketches)),
                Some((a, sk)) => layout.merge(a, sk, &s.accs, &s.sketches),
            }
            self.sessions -= 1;
        }
        let (mut accs, mut sketches) = merged.unwrap_or_else(|| {
            (
                vec![0; layout.words()].into_boxed_slice(),
                Sketches::default(),
            )
        });
        layout.update(&mut accs, rec, &mut sketches);
        let fire_now = end - 1 <= wm;
        k.sessions.push(Session {
            start,
            end,
            fired: fire_now,
            accs,
            sketches,
        });
        self.sessions += 1;
        let si = k.sessions.len() - 1;
        if fire_now {
            self.emit(ki, si, Some(ev), false, out);
            if was_fired {
                self.stats.refired += 1;
            } else {
                self.stats.fired += 1;
            }
        }
        self.schedule(ki, start, end, wm);
    }

    fn on_watermark(&mut self, wm: i64, out: &mut dyn Emitter) {
        while let Some(Reverse((t, _, _, _))) = self.timers.peek() {
            if *t > wm {
                break;
            }
            let Some(Reverse((t, kind, ki, start))) = self.timers.pop() else {
                break;
            };
            let Some(k) = self.keys.get_mut(ki as usize) else {
                continue;
            };
            let Some(si) = k.sessions.iter().position(|s| s.start == start) else {
                continue;
            };
            let s = &k.sessions[si];
            match kind {
                TimerKind::Fire if !s.fired && s.end - 1 == t => {
                    k.sessions[si].fired = true;
                    self.emit(ki, si, None, false, out);
                    self.stats.fired += 1;
                }
                TimerKind::Cleanup if (s.end - 1).saturating_add(self.lateness) == t => {
                    if !s.fired {
                        // Cleanup never precedes firing (lateness >= 0), but never lose a result.
                        self.emit(ki, si, None, false, out);
                        self.stats.fired += 1;
                    }
                    self.keys[ki as usize].sessions.swap_remove(si);
                    self.sessions -= 1;
                    self.drop_key_if_empty(ki);
                }
                _ => {}
            }
        }
    }

    fn snapshot(&self, e: &mut Enc) {
        self.stats.encode(e);
        let live: Vec<&KeyState> = self
            .keys
            .iter()
            .filter(|k| !k.sessions.is_empty())
            .collect();
        e.u64(live.len() as u64);
        for k in live {
            e.u64(k.hash);
            e.bytes(k.key());
            e.u64(k.sessions.len() as u64);
            for s in &k.sessions {
                e.i64(s.start);
                e.i64(s.end);
                e.u8(u8::from(s.fired));
                self.layout.encode(&s.accs, &s.sketches, e);
            }
        }
    }

    fn restore(&mut self, state: &[u8], keep: &dyn Fn(u64) -> bool, wm: i64) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.stats.add_decoded(&mut d)?;
        let keys = d.count(24, "keys")?;
        for _ in 0..keys {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let n = d.count(17, "sessions")?;
            let mut sessions = Vec::with_capacity(n);
            for _ in 0..n {
                let (start, end) = (d.i64("session start")?, d.i64("session end")?);
                let fired = d.u8("session fired")? != 0;
                let mut accs = vec![0; self.layout.words()].into_boxed_slice();
                let mut sketches = Sketches::default();
                self.layout.decode(&mut d, &mut accs, &mut sketches)?;
                sessions.push(Session {
                    start,
                    end,
                    fired,
                    accs,
                    sketches,
                });
            }
            if !keep(hash) {
                continue;
            }
            let ki = self.key_index(hash, key);
            if !self.keys[ki as usize].sessions.is_empty() {
                return Err("a key appears twice".into());
            }
            for s in &sessions {
                self.schedule(ki, s.start, s.end, wm);
            }
            self.sessions += sessions.len();
            self.keys[ki as usize].sessions = sessions;
        }
        if !d.is_empty() {
            return Err("bytes after the session state".into());
        }
        Ok(())
    }

    fn next_action(&self) -> i64 {
        self.timers
            .peek()
            .map(|Reverse((t, ..))| *t)
            .unwrap_or(WM_MAX)
    }

    fn report(&self, r: &mut OperatorReport) {
        self.stats.report(r);
        let keys = (self.keys.len() - self.free.len()) as u64;
        let bytes = self.keys.capacity() * std::mem::size_of::<KeyState>()
            + self.sessions * std::mem::size_of::<Session>()
            + self.index.capacity() * 4
            + self.timers.capacity() * 32;
        r.open += self.sessions as u64;
        r.keys += keys;
        r.state_bytes += bytes as u64;
    }
}
