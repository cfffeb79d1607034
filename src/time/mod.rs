//! Event time: the exact watermark each event sees, combined over every input partition.
//!
//! Sources are cut into chunks that all shards process in one global order (see `runtime`). A
//! receiver learns a partition's progress from chunk-end markers (the largest event time of a whole
//! chunk) and, inside a chunk, from each event's `seen_max` (the largest event time of the earlier
//! events of that chunk). So the watermark before an event is known exactly, whichever shard parsed
//! the chunk and whichever shard owns the event's key:
//!
//! `wm(e) = min over live partitions q of (max event time seen on q before e) - max_out_of_orderness(q)`
//!
//! A partition stops holding the watermark back once it is finished (its last chunk ended) or idle
//! (its source reported no data for `idle_timeout`) until it has data again. This module never reads
//! a clock: idleness is decided by the source and arrives as a chunk flag, so replays are exact.

/// Watermark meaning "no event time yet".
pub const WM_MIN: i64 = i64::MIN;
/// Watermark at end of input: every window fires.
pub const WM_MAX: i64 = i64::MAX;

#[derive(Debug, Clone, Copy)]
struct Part {
    /// Largest event time over completed chunks; `WM_MIN` before any.
    max: i64,
    ooo: i64,
    live: bool,
    idle: bool,
}

impl Part {
    #[inline]
    fn holds(&self) -> bool {
        self.live && !self.idle
    }
}

/// The watermark before each data event of one partition's current chunk, as a function of the
/// event's `seen_max`; valid until the next chunk-end marker is applied to the tracker.
#[derive(Debug, Clone, Copy)]
pub struct ChunkTime {
    /// Watermark over every other partition.
    others: i64,
    /// This partition's largest event time over completed chunks.
    max: i64,
    ooo: i64,
}

impl ChunkTime {
    /// The function for a partition whose earlier chunks reached `max` (`WM_MIN`: none), with
    /// bound `ooo`, while every other partition holds the watermark at `others` (`WM_MAX`: none).
    pub fn new(others: i64, max: i64, ooo: i64) -> Self {
        ChunkTime { others, max, ooo }
    }

    /// The watermark before a data event whose chunk had seen `seen_max` so far.
    #[inline(always)]
    pub fn before(&self, seen_max: i64) -> i64 {
        let max = self.max.max(seen_max);
        let own = if max == WM_MIN {
            WM_MIN
        } else {
            max.saturating_sub(self.ooo)
        };
        own.min(self.others)
    }

    /// A `seen_max` bound below which the watermark stays under `wm`: every event with
    /// `seen_max < seen_below(wm)` has `before(seen_max) < wm`. Conservative (an event at or above
    /// the bound may still be under `wm`), so a caller batching events below it never skips a
    /// watermark step.
    #[inline]
    pub fn seen_below(&self, wm: i64) -> i64 {
        if self.others < wm {
            WM_MAX
        } else if self.before(WM_MIN) >= wm {
            WM_MIN
        } else {
            wm.saturating_add(self.ooo)
        }
    }
}

#[derive(Debug, Clone)]
pub struct WatermarkTracker {
    parts: Vec<Part>,
    /// Partition of the chunk being read, and the watermark over every other partition.
    cur: Option<u16>,
    others: i64,
}

impl WatermarkTracker {
    /// `parts[i] = (max_out_of_orderness_ms, has_data)`: a partition with no chunks at all (an empty
    /// file) never holds the watermark back.
    pub fn new(parts: &[(i64, bool)]) -> Self {
        WatermarkTracker {
            parts: parts
                .iter()
                .map(|&(ooo, live)| Part {
                    max: WM_MIN,
                    ooo,
                    live,
                    idle: false,
                })
                .collect(),
            cur: None,
            others: WM_MAX,
        }
    }

    /// Each partition's own watermark (its largest time minus its bound; WM_MIN before any data).
    pub fn partition_watermarks(&self) -> Vec<i64> {
        self.parts
            .iter()
            .map(|p| Self::contribution(p, p.max))
            .collect()
    }

    fn contribution(p: &Part, max: i64) -> i64 {
        if max == WM_MIN {
            WM_MIN
        } else {
            max.saturating_sub(p.ooo)
        }
    }

    fn recompute_others(&mut self, part: u16) {
        let mut wm = WM_MAX;
        for (i, p) in self.parts.iter().enumerate() {
            if i != part as usize && p.holds() {
                wm = wm.min(Self::contribution(p, p.max));
            }
        }
        self.others = wm;
        self.cur = Some(part);
    }

    /// The watermark before a data event of partition `part` whose chunk had seen `seen_max` so far.
    #[inline]
    pub fn before_event(&mut self, part: u16, seen_max: i64) -> i64 {
        self.chunk_time(part).before(seen_max)
    }

    /// The watermark function for data events of `part` up to the next chunk-end marker: the receiver
    /// asks once per run of events instead of once per event.
    #[inline]
    pub fn chunk_time(&mut self, part: u16) -> ChunkTime {
        if self.cur != Some(part) {
            self.recompute_others(part);
        }
        let p = &mut self.parts[part as usize];
        // Data means the partition is not idle; it holds the watermark again from here.
        p.idle = false;
        ChunkTime {
            others: self.others,
            max: p.max,
            ooo: p.ooo,
        }
    }

    /// What `chunk_time(part)` will return, without marking anything: for a sender that must
    /// know the watermark function of a chunk its own receiver has reached but other shards'
    /// receivers may not have (their trackers must change only through the messages they read).
    pub fn peek_time(&self, part: u16) -> ChunkTime {
        let mut others = WM_MAX;
        for (i, p) in self.parts.iter().enumerate() {
            if i != part as usize && p.holds() {
                others = others.min(Self::contribution(p, p.max));
            }
        }
        let p = &self.parts[part as usize];
        ChunkTime {
            others,
            max: p.max,
            ooo: p.ooo,
        }
    }

    /// Applies a chunk-end marker and returns the watermark after it.
    pub fn chunk_end(&mut self, part: u16, chunk_max: i64, last: bool, idle: bool) -> i64 {
        let p = &mut self.parts[part as usize];
        p.max = p.max.max(chunk_max);
        if last {
            p.live = false;
        }
        p.idle = idle && !last;
        self.cur = None;
        self.current()
    }

    /// The watermark, between chunks, of a node whose watermark follows the partitions `deps`
    /// names (`deps[p]`: how far it is held back behind partition `p`; `None`: not an input).
    pub fn watermark_of(&self, deps: &[Option<i64>]) -> i64 {
        self.parts
            .iter()
            .zip(deps)
            .filter_map(|(p, d)| {
                let h = (*d)?;
                p.holds()
                    .then(|| Self::contribution(p, p.max).saturating_sub(h))
            })
            .min()
            .unwrap_or(WM_MAX)
    }

    /// The watermark function of such a node for data events of `part`'s current chunk (the
    /// chunk's own partition holds it back while the chunk has data, idle or not before).
    pub fn chunk_time_of(&self, part: u16, deps: &[Option<i64>]) -> ChunkTime {
        let mut others = WM_MAX;
        for (i, (p, d)) in self.parts.iter().zip(deps).enumerate() {
            if let (Some(h), true) = (d, i != part as usize && p.holds()) {
                others = others.min(Self::contribution(p, p.max).saturating_sub(*h));
            }
        }
        match (
            deps.get(part as usize).copied().flatten(),
            self.parts.get(part as usize),
        ) {
            (Some(h), Some(p)) => ChunkTime {
                others,
                max: p.max,
                ooo: p.ooo.saturating_add(h),
            },
            // Not an input: constant over the chunk.
            _ => ChunkTime {
                others,
                max: WM_MAX,
                ooo: 0,
            },
        }
    }

    /// Copies `other`'s state (the same partitions) without allocating.
    pub fn copy_from(&mut self, other: &WatermarkTracker) {
        self.parts.clone_from(&other.parts);
        self.cur = None;
        self.others = other.others;
    }

    /// Appends every partition's progress (for a checkpoint taken between chunks).
    pub fn encode(&self, e: &mut crate::checkpoint::codec::Enc) {
        e.u64(self.parts.len() as u64);
        for p in &self.parts {
            e.i64(p.max);
            e.u8(u8::from(p.live) | u8::from(p.idle) << 1);
        }
    }

    /// Restores what `encode` wrote; the partitions must be the same ones (same count).
    pub fn decode(&mut self, d: &mut crate::checkpoint::codec::Dec) -> Result<(), String> {
        let n = d.count(9, "partitions")?;
        if n != self.parts.len() {
            return Err(format!(
                "state has {n} input partitions, this run has {}",
                self.parts.len()
            ));
        }
        for p in &mut self.parts {
            p.max = d.i64("partition progress")?;
            let flags = d.u8("partition progress")?;
            p.live = flags & 1 != 0;
            p.idle = flags & 2 != 0;
        }
        self.cur = None;
        Ok(())
    }

    /// The watermark between chunks: over every partition that holds it back; `WM_MAX` when none does.
    pub fn current(&self) -> i64 {
        self.parts
            .iter()
            .filter(|p| p.holds())
            .map(|p| Self::contribution(p, p.max))
            .min()
            .unwrap_or(WM_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_follows_only_the_partitions_it_reads_less_its_holds() {
        let mut t = WatermarkTracker::new(&[(0, true), (10, true), (0, true)]);
        t.chunk_end(0, 1000, false, false);
        t.chunk_end(1, 500, false, false);
        // Partition 2 has no data yet: it holds back any node that reads it.
        assert_eq!(t.watermark_of(&[Some(0), Some(0), None]), 490);
        assert_eq!(
            t.watermark_of(&[Some(0), None, None]),
            1000,
            "an unrelated input does not hold it"
        );
        assert_eq!(
            t.watermark_of(&[Some(100), None, None]),
            900,
            "held back by an outer join"
        );
        assert_eq!(t.watermark_of(&[None, None, Some(0)]), WM_MIN);
        assert_eq!(
            t.watermark_of(&[None, None, None]),
            WM_MAX,
            "no input: nothing holds it"
        );
        let ct = t.chunk_time_of(0, &[Some(0), Some(0), None]);
        assert_eq!(ct.before(2000), 490);
        let ct = t.chunk_time_of(0, &[Some(5), None, None]);
        assert_eq!(ct.before(2000), 1995);
        let ct = t.chunk_time_of(2, &[Some(0), Some(0), None]);
        assert_eq!(
            ct.before(123),
            490,
            "a chunk of a partition it does not read: constant"
        );
        t.chunk_end(2, WM_MIN, false, true);
        assert_eq!(
            t.watermark_of(&[None, Some(0), Some(0)]),
            490,
            "idle: skipped"
        );
    }

    #[test]
    fn single_partition_watermark_is_running_max_minus_bound() {
        let mut t = WatermarkTracker::new(&[(5, true)]);
        assert_eq!(t.before_event(0, WM_MIN), WM_MIN);
        assert_eq!(t.before_event(0, 100), 95);
        assert_eq!(
            t.before_event(0, 100),
            95,
            "an older event does not move it"
        );
        assert_eq!(t.chunk_end(0, 120, false, false), 115);
        assert_eq!(
            t.before_event(0, 50),
            115,
            "a new chunk starts from the earlier chunks' max"
        );
        assert_eq!(
            t.chunk_end(0, 130, true, false),
            WM_MAX,
            "the last chunk ends the partition"
        );
    }

    #[test]
    fn seen_below_never_lets_a_watermark_step_through() {
        // Exhaustive over small values: for each chunk state and target, every seen_max under the
        // bound must give a watermark under the target.
        let vals = [WM_MIN, -7, -1, 0, 1, 3, 5, 9, 20, WM_MAX];
        for &others in &vals {
            for &max in &vals {
                for ooo in [0, 1, 5] {
                    let t = ChunkTime { others, max, ooo };
                    for &wm in &vals {
                        let bound = t.seen_below(wm);
                        for &seen in &vals {
                            if seen < bound {
                                assert!(
                                    t.before(seen) < wm,
                                    "others={others} max={max} ooo={ooo} wm={wm} seen={seen}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn minimum_over_partitions_until_one_finishes() {
        let mut t = WatermarkTracker::new(&[(0, true), (10, true), (0, false)]);
        t.chunk_end(0, 1000, false, false);
        assert_eq!(t.current(), WM_MIN, "partition 1 has no data yet");
        t.chunk_end(1, 500, false, false);
        assert_eq!(t.current(), 490);
        assert_eq!(t.before_event(0, 2000), 490);
        assert_eq!(t.before_event(1, 700), 690);
        assert_eq!(
            t.chunk_end(1, 800, true, false),
            1000,
            "a finished partition stops holding it back"
        );
    }

    #[test]
    fn idle_partition_is_skipped_until_it_has_data_again() {
        let mut t = WatermarkTracker::new(&[(0, true), (0, true)]);
        t.chunk_end(0, 1000, false, false);
        t.chunk_end(1, 100, false, false);
        assert_eq!(t.current(), 100);
        assert_eq!(
            t.chunk_end(1, WM_MIN, false, true),
            1000,
            "idle: no longer the minimum"
        );
        assert_eq!(
            t.before_event(1, 200),
            200,
            "data again: it holds the watermark"
        );
    }
}
