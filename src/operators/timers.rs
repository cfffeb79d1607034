//! Event-time timers for operators that hold many rows, each until its own expiry: a calendar of
//! coarse time buckets, each a plain `Vec` sorted only when the watermark reaches it.
//!
//! A binary heap over every held row costs a cache miss per level on each pop once it outgrows the
//! cache (hundreds of thousands of rows for a 10 s join at a few M events/s). Rows arrive roughly in
//! event-time order, so their expiries fall into the few buckets at the front of the calendar;
//! pushing is an append, and a bucket is sorted once, when the watermark first reaches into it.
//! Due timers come out in (time, id) order, the same order a heap would give, so what an operator
//! does with them stays a function of the input.

use std::collections::BTreeMap;

/// Milliseconds per bucket, as a shift: 1024 ms.
const BUCKET_SHIFT: u32 = 10;

/// One timer: due when the watermark reaches `at`; `id` orders timers of the same time (the
/// order they were set) and names the row; `key` and `tag` are the operator's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timer {
    pub at: i64,
    pub id: u64,
    pub key: u32,
    pub tag: u32,
}

struct Bucket {
    /// Timers from `head` on are set; those before it have fired (a bucket the watermark is inside
    /// fires a few at a time, and shifting the rest down each time would cost more than the timers).
    timers: Vec<Timer>,
    head: usize,
    /// The earliest `at` of the set timers.
    min: i64,
    /// Whether the set timers are in (at, id) order.
    sorted: bool,
}

/// Timers in time buckets.
#[derive(Default)]
pub struct Timers {
    buckets: BTreeMap<i64, Bucket>,
    /// Emptied buckets' vectors, reused so that setting timers allocates nothing once warm.
    spare: Vec<Vec<Timer>>,
    len: usize,
}

impl Timers {
    pub fn push(&mut self, t: Timer) {
        let spare = &mut self.spare;
        let b = self
            .buckets
            .entry(t.at >> BUCKET_SHIFT)
            .or_insert_with(|| Bucket {
                timers: spare.pop().unwrap_or_default(),
                head: 0,
                min: i64::MAX,
                sorted: true,
            });
        if b.timers[b.head..]
            .last()
            .is_some_and(|l| (l.at, l.id) > (t.at, t.id))
        {
            b.sorted = false;
        }
        b.timers.push(t);
        b.min = b.min.min(t.at);
        self.len += 1;
    }

    /// Moves every timer due at watermark `wm` (`at <= wm`) into `out`, in (at, id) order.
    pub fn take_due(&mut self, wm: i64, out: &mut Vec<Timer>) {
        while let Some(mut e) = self.buckets.first_entry() {
            let b = e.get_mut();
            if b.min > wm {
                return;
            }
            let set = &mut b.timers[b.head..];
            if !b.sorted {
                set.sort_unstable_by_key(|t| (t.at, t.id));
                b.sorted = true;
            }
            let due = set.partition_point(|t| t.at <= wm);
            out.extend_from_slice(&set[..due]);
            b.head += due;
            self.len -= due;
            match b.timers.get(b.head) {
                Some(first) => {
                    b.min = first.at;
                    return;
                }
                None => {
                    let mut v = e.remove().timers;
                    v.clear();
                    self.spare.push(v);
                }
            }
        }
    }

    /// When the next timer is due; `i64::MAX` when none is set.
    pub fn next(&self) -> i64 {
        self.buckets
            .first_key_value()
            .map_or(i64::MAX, |(_, b)| b.min)
    }

    /// Every set timer, in (at, id) order (for snapshots: it sorts a copy).
    pub fn sorted(&self) -> Vec<Timer> {
        let mut all: Vec<Timer> = self
            .buckets
            .values()
            .flat_map(|b| b.timers[b.head..].iter().copied())
            .collect();
        all.sort_unstable_by_key(|t| (t.at, t.id));
        all
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes allocated for timers, in use or kept for reuse.
    pub fn bytes(&self) -> u64 {
        let cap: usize = self
            .buckets
            .values()
            .map(|b| b.timers.capacity())
            .sum::<usize>()
            + self.spare.iter().map(Vec::capacity).sum::<usize>();
        (cap * std::mem::size_of::<Timer>() + self.buckets.len() * 64) as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a sort of everything set: due timers come out exactly once, in (at, id) order,
        /// each at the first watermark that reaches it.
        #[test]
        fn timers_fire_in_order_at_their_watermark(
            ats in proptest::collection::vec(-5_000i64..20_000, 0..300),
            steps in proptest::collection::vec(0i64..3_000, 1..20),
        ) {
            let mut timers = Timers::default();
            let mut model: Vec<(i64, u64)> = Vec::new();
            let mut set = ats.iter().enumerate();
            let mut wm = -6_000i64;
            let mut out = Vec::new();
            for step in steps {
                // Timers are set after the watermark, like rows an operator holds.
                for (id, &at) in set.by_ref().take(20) {
                    let at = at.max(wm + 1);
                    timers.push(Timer { at, id: id as u64, key: 0, tag: 0 });
                    model.push((at, id as u64));
                }
                wm += step;
                out.clear();
                timers.take_due(wm, &mut out);
                model.sort_unstable();
                let due = model.partition_point(|&(at, _)| at <= wm);
                let expect: Vec<(i64, u64)> = model.drain(..due).collect();
                let got: Vec<(i64, u64)> = out.iter().map(|t| (t.at, t.id)).collect();
                prop_assert_eq!(got, expect);
                prop_assert_eq!(timers.len(), model.len());
                prop_assert_eq!(timers.next(), model.first().map_or(i64::MAX, |m| m.0));
                let all: Vec<(i64, u64)> = timers.sorted().iter().map(|t| (t.at, t.id)).collect();
                prop_assert_eq!(&all, &model);
            }
        }
    }

    #[test]
    fn extreme_times_do_not_overflow() {
        let mut t = Timers::default();
        for (id, at) in [i64::MAX, i64::MIN, 0].into_iter().enumerate() {
            t.push(Timer {
                at,
                id: id as u64,
                key: 0,
                tag: 0,
            });
        }
        let mut out = Vec::new();
        t.take_due(0, &mut out);
        assert_eq!(out.iter().map(|t| t.at).collect::<Vec<_>>(), [i64::MIN, 0]);
        t.take_due(i64::MAX, &mut out);
        assert_eq!(out.len(), 3);
        assert!(t.is_empty());
    }
}
