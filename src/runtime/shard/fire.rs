//! Watermark steps: when each node's watermark (over its own inputs, see `runtime::topology`)
//! passes the point its operator waits for, and what a chunk's end does at each depth.
//!
//! Within a chunk a node's watermark is a function of the position (`seen_max`), so its next step
//! happens at a known position: the smallest `seen_max` whose watermark reaches the operator's
//! `next_action` (`ChunkTime::seen_below`). A shard fires a node there, before anything at a later
//! position (and before data at the same one; records fired at that position by nodes upstream
//! come first), and tags what it fires with that position. That is the order a single thread
//! running the whole graph event by event would see, so results do not depend on shards.

use super::Shard;
use crate::record::event::{Event, Tag};

impl Shard {
    /// Notes the partition of the chunk being received and works out every node's watermark
    /// function for it (once per chunk).
    #[inline]
    pub(super) fn enter_chunk(&mut self, part: u16) {
        if self.chunk.part == Some(part) {
            return;
        }
        self.chunk.part = Some(part);
        self.emitter.part = part;
        for (n, deps) in self.setup.topo.deps.iter().enumerate() {
            self.chunk.times[n] = self.tracker.chunk_time_of(part, deps);
        }
    }

    /// The smallest `seen_max` at which some node of `depth` has a step due (`i64::MAX`: none).
    #[inline]
    pub(super) fn due_below(&self, depth: usize) -> i64 {
        let mut below = i64::MAX;
        for &n in &self.setup.topo.by_depth[depth] {
            let next = self.ops[n].next_action();
            if next < crate::time::WM_MAX {
                below = below.min(self.chunk.times[n].seen_below(next));
            }
        }
        below
    }

    /// Fires, in position order, every step of a node of `depth` due before position `at` (at it
    /// too when `inclusive`: data at a position comes after the steps there), within the chunk.
    pub(super) fn fire_upto(&mut self, depth: usize, at: i64, inclusive: bool) {
        // Positions past the chunk's last event belong to its end (see `end_steps`).
        let cap = if depth == 0 {
            i64::MAX
        } else {
            self.chunk.last_seen
        };
        loop {
            let mut best: Option<(i64, usize)> = None;
            for &n in &self.setup.topo.by_depth[depth] {
                let next = self.ops[n].next_action();
                if next == crate::time::WM_MAX {
                    continue; // nothing waits for the watermark
                }
                let t = self.chunk.times[n].seen_below(next);
                let due = t < at || (inclusive && t == at);
                if due && t <= cap && best.is_none_or(|b| (t, n) < b) {
                    best = Some((t, n));
                }
            }
            let Some((t, n)) = best else { return };
            let wm = self.chunk.times[n].before(t).max(self.node_wm[n]);
            if !self.fire(depth, n, wm, t) {
                return;
            }
        }
    }

    /// One watermark step of node `n` to `wm`, its records tagged with position `at`; false when
    /// the operator did not move past it (so the caller stops asking).
    fn fire(&mut self, depth: usize, n: usize, wm: i64, at: i64) -> bool {
        let before = self.emitter.emitted;
        self.emitter.depth = depth;
        self.emitter.begin_firing(n, at);
        self.ops[n].on_watermark(wm, &mut self.emitter);
        self.emitter.end_firing();
        self.node_wm[n] = self.node_wm[n].max(wm);
        let fired = self.emitter.emitted - before;
        if fired > 0 {
            self.mark_emitted(fired, wm);
        }
        if wm < crate::time::WM_MAX && self.ops[n].next_action() <= wm {
            self.failure = Some(format!(
                "operator `{}` did not move past watermark {wm}",
                self.setup.op_names.get(n).map_or("?", String::as_str)
            ));
            return false;
        }
        true
    }

    /// The chunk's end at `depth`: the steps left inside it, then every node's step to the
    /// watermark after the end marker (the end's own position, after everything in the chunk).
    fn end_steps(&mut self, depth: usize) {
        self.fire_upto(depth, self.chunk.last_seen, true);
        for i in 0..self.setup.topo.by_depth[depth].len() {
            let n = self.setup.topo.by_depth[depth][i];
            let wm = self.tracker_end.watermark_of(&self.setup.topo.deps[n]);
            if wm <= self.node_wm[n] {
                continue;
            }
            if wm >= self.ops[n].next_action() {
                self.fire(depth, n, wm, i64::MAX);
            }
            self.node_wm[n] = self.node_wm[n].max(wm);
        }
    }

    /// Everything of the current chunk at the current depth is in: end it there, tell the next
    /// depth's receivers this shard has sent all of the chunk, and go on (next depth or chunk).
    pub(super) fn finish_depth(&mut self) {
        let depth = self.depth;
        if let Some(by) = self.setup.topo.by_depth.get(depth) {
            if !by.is_empty() {
                self.end_steps(depth);
            }
        }
        if depth + 1 < self.setup.topo.depths {
            let mut end = Event::EMPTY;
            end.tag = Tag::CHUNK_END;
            end.pos = self.next_seq;
            if let Some(out) = self.emitter.next.get_mut(depth) {
                for d in 0..self.n {
                    out.send(d, &end, &[]);
                }
            }
            self.depth = depth + 1;
            self.merge.begin_depth();
        } else {
            self.finish_chunk();
        }
    }

    /// Every depth is done with the current chunk.
    fn finish_chunk(&mut self) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.depth = 0;
        std::mem::swap(&mut self.tracker, &mut self.tracker_end);
        self.chunk.part = None;
        self.chunk.started = false;
        self.chunk.last_seen = i64::MIN;
        self.chunk.max_ts = i64::MIN;
        self.setup.schedule.received(self.id, self.next_seq);
        if !self.record_out.is_empty() {
            self.flush_records(seq);
        }
        if !self.emitter.failed.is_empty() || self.emitter.sinks.iter().any(|s| s.has_rejected()) {
            self.dead_results();
        }
        if !self.emit_marks.is_empty() {
            let ingest = self.chunk.ingest_ns;
            for &(t, n) in &self.emit_marks {
                let us = ((t - ingest).max(0) / 1000).max(1) as u64;
                let _ = self.hist.record_n(us, n);
            }
            self.emit_marks.clear();
        }
    }

    /// `n` records were emitted by a step to `wm`: marks for the latency histograms.
    fn mark_emitted(&mut self, n: u64, wm: i64) {
        let t = self.now_ns();
        self.emit_marks.push((t, n));
        // Results fired by watermark `wm` were complete in event time at `wm` (their windows
        // ended within one watermark step of it); read the wall clock only when some fired.
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let lag = now_ms.saturating_sub(wm).clamp(1, 315_360_000_000) as u64;
        let _ = self.event_hist.record_n(lag, n);
    }
}
