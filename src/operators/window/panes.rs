//! Pane-based windows (tumbling, sliding, cumulative): state is one accumulator set per (key, pane).
//!
//! A pane is the largest time slice every window is a whole number of: the size for tumbling, the
//! slide for sliding, the step for cumulative windows. An event updates exactly one pane; firing a
//! window merges its panes (one pane: no merge). A pane is dropped once the last window containing it
//! is past `end - 1 + allowed_lateness`, which bounds state by the watermark.

use super::aggregate::{Acc, AggLayout};
use super::format::LineFormat;
use super::align;
use crate::event::{Event, INLINE_KEY_BYTES};
use crate::operators::{Emitter, Operator, OperatorStats};
use crate::plan::WindowKind;
use crate::time::{WM_MAX, WM_MIN};
use hashbrown::HashTable;

#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    kind: WindowKind,
    pane: i64,
}

impl Geometry {
    pub fn new(kind: WindowKind) -> Self {
        let pane = match kind {
            WindowKind::Tumbling { size_ms } => size_ms,
            WindowKind::Sliding { slide_ms, .. } => slide_ms,
            WindowKind::Cumulative { step_ms, .. } => step_ms,
            WindowKind::Session { .. } => unreachable!("sessions are not pane-based"),
        };
        Geometry { kind, pane }
    }

    /// Calls `f(start, end)` for every window containing the pane starting at `p`, by increasing end.
    #[inline]
    fn windows_of_pane(&self, p: i64, mut f: impl FnMut(i64, i64)) {
        match self.kind {
            WindowKind::Tumbling { size_ms } => f(p, p.saturating_add(size_ms)),
            WindowKind::Sliding { size_ms, slide_ms } => {
                let n = size_ms / slide_ms;
                for k in (0..n).rev() {
                    let s = p - k * slide_ms;
                    f(s, s.saturating_add(size_ms));
                }
            }
            WindowKind::Cumulative { step_ms, max_size_ms } => {
                let b = align(p, max_size_ms);
                let first = (p - b) / step_ms + 1;
                for k in first..=max_size_ms / step_ms {
                    f(b, b.saturating_add(k * step_ms));
                }
            }
            WindowKind::Session { .. } => {}
        }
    }

    /// End of the last window containing pane `p`.
    fn last_end(&self, p: i64) -> i64 {
        match self.kind {
            WindowKind::Tumbling { size_ms } => p.saturating_add(size_ms),
            WindowKind::Sliding { size_ms, .. } => p.saturating_add(size_ms),
            WindowKind::Cumulative { max_size_ms, .. } => {
                align(p, max_size_ms).saturating_add(max_size_ms)
            }
            WindowKind::Session { .. } => p,
        }
    }
}

#[derive(Clone)]
struct Slot {
    hash: u64,
    key_len: u8,
    key: [u8; INLINE_KEY_BYTES],
    base: u32,
}

impl Slot {
    #[inline]
    fn key(&self) -> &[u8] {
        &self.key[..self.key_len as usize]
    }
}

struct Pane {
    start: i64,
    table: HashTable<Slot>,
    accs: Vec<Acc>,
}

impl Pane {
    fn new(start: i64) -> Self {
        Pane { start, table: HashTable::new(), accs: Vec::new() }
    }

    /// The accumulator set of `e`'s key, created on first sight.
    #[inline]
    fn accs_for(&mut self, hash: u64, key: &[u8], layout: &AggLayout) -> &mut [Acc] {
        let n = layout.len();
        let base = match self.table.find(hash, |s| s.hash == hash && s.key() == key) {
            Some(s) => s.base,
            None => {
                let base = layout.alloc(&mut self.accs);
                let mut slot = Slot { hash, key_len: key.len() as u8, key: [0; INLINE_KEY_BYTES], base };
                slot.key[..key.len()].copy_from_slice(key);
                self.table.insert_unique(hash, slot, |s| s.hash);
                base
            }
        } as usize;
        &mut self.accs[base..base + n]
    }

    fn get(&self, hash: u64, key: &[u8], n: usize) -> Option<&[Acc]> {
        self.table
            .find(hash, |s| s.hash == hash && s.key() == key)
            .map(|s| &self.accs[s.base as usize..s.base as usize + n])
    }
}

pub struct PaneWindows {
    geo: Geometry,
    lateness: i64,
    layout: AggLayout,
    format: LineFormat,
    /// Live panes by increasing start.
    panes: Vec<Pane>,
    last_pane: usize,
    /// Windows with `end - 1 <= fired_upto` have fired.
    fired_upto: i64,
    next_action: i64,
    line: Vec<u8>,
    stats: OperatorStats,
}

impl PaneWindows {
    pub fn new(geo: Geometry, lateness: i64, layout: AggLayout, format: LineFormat) -> Self {
        PaneWindows {
            geo,
            lateness,
            layout,
            format,
            panes: Vec::new(),
            last_pane: 0,
            fired_upto: WM_MIN,
            next_action: WM_MAX,
            line: Vec::with_capacity(256),
            stats: OperatorStats::default(),
        }
    }

    #[inline]
    fn pane_index(&mut self, start: i64) -> usize {
        if let Some(p) = self.panes.get(self.last_pane) {
            if p.start == start {
                return self.last_pane;
            }
        }
        let idx = match self.panes.binary_search_by_key(&start, |p| p.start) {
            Ok(i) => i,
            Err(i) => {
                self.panes.insert(i, Pane::new(start));
                self.note_pane(start);
                i
            }
        };
        self.last_pane = idx;
        idx
    }

    /// Lowers `next_action` for a new pane: its first unfired window end and its cleanup time.
    fn note_pane(&mut self, start: i64) {
        let fired = self.fired_upto;
        let mut first = WM_MAX;
        self.geo.windows_of_pane(start, |_, e| {
            if e - 1 > fired && e - 1 < first {
                first = e - 1;
            }
        });
        let cleanup = (self.geo.last_end(start) - 1).saturating_add(self.lateness);
        self.next_action = self.next_action.min(first).min(cleanup);
    }

    fn recompute_next_action(&mut self) {
        self.next_action = WM_MAX;
        let starts: Vec<i64> = self.panes.iter().map(|p| p.start).collect();
        for s in starts {
            self.note_pane(s);
        }
    }

    /// Writes the result of window `[s, e)` for one key (merging its panes) into `self.line`.
    fn write_key_result(&mut self, hash: u64, key: &[u8], s: i64, e: i64) {
        let n = self.layout.len();
        let mut merged: Option<Vec<Acc>> = None;
        let mut single: Option<usize> = None;
        for (i, p) in self.panes.iter().enumerate() {
            if p.start < s || p.start >= e {
                continue;
            }
            if let Some(accs) = p.get(hash, key, n) {
                match (&mut merged, single) {
                    (None, None) => single = Some(i),
                    (None, Some(first)) => {
                        let mut m = self.panes[first].get(hash, key, n).map(<[Acc]>::to_vec);
                        if let Some(m) = m.as_mut() {
                            self.layout.merge(m, accs);
                        }
                        merged = m;
                    }
                    (Some(m), _) => self.layout.merge(m, accs),
                }
            }
        }
        let accs: &[Acc] = match (&merged, single) {
            (Some(m), _) => m,
            (None, Some(i)) => match self.panes[i].get(hash, key, n) {
                Some(a) => a,
                None => return,
            },
            (None, None) => return,
        };
        self.format.write(key, s, e, &self.layout, accs, &mut self.line);
    }

    /// Emits every key of window `[s, e)`.
    fn fire_window(&mut self, s: i64, e: i64, out: &mut dyn Emitter) {
        let n = self.layout.len();
        let in_window: Vec<usize> =
            (0..self.panes.len()).filter(|&i| self.panes[i].start >= s && self.panes[i].start < e).collect();
        match in_window.as_slice() {
            [] => {}
            [only] => {
                let pane = &self.panes[*only];
                for slot in pane.table.iter() {
                    self.line.clear();
                    let accs = &pane.accs[slot.base as usize..slot.base as usize + n];
                    self.format.write(slot.key(), s, e, &self.layout, accs, &mut self.line);
                    out.result(&self.line);
                    self.stats.fired += 1;
                }
            }
            many => {
                let mut table: HashTable<Slot> = HashTable::new();
                let mut accs: Vec<Acc> = Vec::new();
                for &i in many {
                    let pane = &self.panes[i];
                    for slot in pane.table.iter() {
                        let from = &pane.accs[slot.base as usize..slot.base as usize + n];
                        match table.find(slot.hash, |t| t.hash == slot.hash && t.key() == slot.key()) {
                            Some(t) => {
                                let b = t.base as usize;
                                self.layout.merge(&mut accs[b..b + n], from);
                            }
                            None => {
                                let base = accs.len() as u32;
                                accs.extend_from_slice(from);
                                let mut t = slot.clone();
                                t.base = base;
                                table.insert_unique(slot.hash, t, |t| t.hash);
                            }
                        }
                    }
                }
                for slot in table.iter() {
                    self.line.clear();
                    let a = &accs[slot.base as usize..slot.base as usize + n];
                    self.format.write(slot.key(), s, e, &self.layout, a, &mut self.line);
                    out.result(&self.line);
                    self.stats.fired += 1;
                }
            }
        }
    }
}

impl Operator for PaneWindows {
    #[inline]
    fn on_event(&mut self, ev: &Event, wm: i64, out: &mut dyn Emitter) {
        // The runtime skips `on_watermark` below `next_action`, where nothing is due; a pane created
        // now must still count windows up to `wm` as fired.
        self.fired_upto = self.fired_upto.max(wm);
        let p = align(ev.ts, self.geo.pane);
        let lateness = self.lateness;
        // Classify the event against each of its windows: on time, late but allowed (re-fire), dropped.
        let mut accepted = false;
        let mut refire: [(i64, i64); 4] = [(0, 0); 4];
        let mut n_refire = 0usize;
        let mut overflow_refire: Vec<(i64, i64)> = Vec::new();
        self.geo.windows_of_pane(p, |s, e| {
            let last = e - 1;
            if last > wm {
                accepted = true;
            } else if wm < last.saturating_add(lateness) {
                accepted = true;
                if n_refire < refire.len() {
                    refire[n_refire] = (s, e);
                    n_refire += 1;
                } else {
                    overflow_refire.push((s, e));
                }
            }
        });
        if !accepted {
            self.stats.late_dropped += 1;
            out.late(ev);
            return;
        }
        let idx = self.pane_index(p);
        let layout = &self.layout;
        let accs = self.panes[idx].accs_for(ev.hash, ev.key(), layout);
        layout.update(accs, ev);
        for &(s, e) in refire[..n_refire].iter().chain(overflow_refire.iter()) {
            self.line.clear();
            self.write_key_result(ev.hash, ev.key(), s, e);
            if !self.line.is_empty() {
                out.result(&self.line);
                self.stats.refired += 1;
            }
        }
    }

    fn on_watermark(&mut self, wm: i64, out: &mut dyn Emitter) {
        if wm < self.next_action {
            self.fired_upto = self.fired_upto.max(wm);
            return;
        }
        let fired = self.fired_upto;
        let mut due: Vec<(i64, i64)> = Vec::new();
        for p in &self.panes {
            self.geo.windows_of_pane(p.start, |s, e| {
                if e - 1 > fired && e - 1 <= wm {
                    due.push((e, s));
                }
            });
        }
        due.sort_unstable();
        due.dedup();
        for (e, s) in due {
            self.fire_window(s, e, out);
        }
        self.fired_upto = wm;
        let (geo, lateness) = (self.geo, self.lateness);
        self.panes.retain(|p| wm < (geo.last_end(p.start) - 1).saturating_add(lateness));
        self.last_pane = 0;
        self.recompute_next_action();
    }

    fn next_action(&self) -> i64 {
        self.next_action
    }

    fn open_windows(&self) -> usize {
        self.panes.len()
    }

    fn stats(&self) -> OperatorStats {
        self.stats
    }
}
