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
        if self.cur != Some(part) {
            self.recompute_others(part);
        }
        let p = &mut self.parts[part as usize];
        // Data means the partition is not idle; it holds the watermark again from here.
        p.idle = false;
        let own = Self::contribution(p, p.max.max(seen_max));
        own.min(self.others)
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
