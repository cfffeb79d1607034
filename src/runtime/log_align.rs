//! Watermark alignment (`watermark.max_drift`) for log partitions: in the padded rounds a job that
//! reads logs runs (every partition has a chunk in every round), a partition whose watermark is
//! more than its source's `max_drift` ahead of the slowest aligned partition that still holds the
//! watermark back sits its chunk out: it reads nothing this round (a bounded partition reads the
//! skipped range with its next chunk; its last chunk is never skipped), so a fast partition does
//! not fill window and join state with rows that cannot fire yet. The lag stays in the log.
//!
//! Round `r` is decided from what the chunks of rounds `..= r - LAG` reported at their ends: each
//! partition's largest event time so far and whether it was finished (a bounded partition at its
//! end) or idle (no record for `idle_timeout`). A decision waits until those reports are in. So a
//! bounded job's order is a function of the data, as without alignment; for an unbounded one,
//! what a chunk holds (and when a partition turns idle) depends on arrival timing, as always.
//! The slowest holding partition never sits out, so reading always progresses.
//!
//! The state is shared by the shards behind one mutex, taken once per log chunk started or
//! finished, never per event. It is not checkpointed: a resumed run numbers its rounds afresh
//! and rebuilds it from its first `LAG` rounds, which read everything.

use std::collections::VecDeque;
use std::sync::Mutex;

/// Rounds between a report and the decisions that use it.
pub const LAG: u64 = 4;

/// What a partition's chunk end said about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// It has data to come: its watermark holds the others back.
    Holding,
    /// No record for `idle_timeout`: it holds nobody back until it has data again.
    Idle,
    /// A bounded partition read to its end.
    Done,
}

/// Whether a job of aligned bounded partitions goes on at a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounds {
    Go,
    /// Every round from here on is past the end.
    End,
    /// The reports this depends on are not in yet.
    Wait,
}

/// What a partition should do with its chunk of a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Read,
    SitOut,
    /// The reports this round depends on are not in yet.
    Wait,
}

#[derive(Debug)]
struct Part {
    /// `Some`: aligned, with this drift (ms).
    drift_ms: Option<i64>,
    /// A file's or the generator's chunk count (`None`: unbounded, or a log partition).
    chunks: Option<u64>,
    ooo_ms: i64,
    /// Round of `hist[0]`.
    base: u64,
    /// Per reported round: the largest event time so far (`i64::MIN`: none) and whether it holds.
    hist: VecDeque<(i64, Holds)>,
    /// The next round this partition will ask about.
    next: u64,
    /// Rounds it sat out.
    paused: u64,
}

/// The shared alignment state of one job's log partitions (indexed like the job's partitions;
/// partitions that are not aligned neither sit out nor hold others back).
#[derive(Debug)]
pub struct LogAlign {
    parts: Mutex<Vec<Part>>,
    /// The first round past the end, once known (a bounded job).
    end: Mutex<Option<u64>>,
}

impl LogAlign {
    /// Per partition: `Some((max_drift_ms, max_out_of_orderness_ms, chunks))` for an aligned
    /// partition (`chunks`: a file's or the generator's chunk count; `None` for a log or
    /// unbounded). `None` when no partition is aligned.
    pub fn new(parts: &[Option<(i64, i64, Option<u64>)>]) -> Option<LogAlign> {
        parts.iter().any(Option::is_some).then(|| LogAlign {
            parts: Mutex::new(
                parts
                    .iter()
                    .map(|p| Part {
                        drift_ms: p.map(|(d, _, _)| d),
                        chunks: p.and_then(|(_, _, c)| c),
                        ooo_ms: p.map_or(0, |(_, o, _)| o),
                        base: 0,
                        hist: VecDeque::new(),
                        next: 0,
                        paused: 0,
                    })
                    .collect(),
            ),
            end: Mutex::new(None),
        })
    }

    /// `Some(chunks)` for an aligned partition (see [`LogAlign::new`]); `None` if not aligned.
    pub fn count(&self, part: u16) -> Option<Option<u64>> {
        let parts = self.parts.lock().ok()?;
        let p = parts.get(part as usize)?;
        p.drift_ms.map(|_| p.chunks)
    }

    /// Whether round `round` exists in a job whose aligned partitions are all bounded and whose
    /// other partitions end by round `fixed` (their chunk counts): it does not once every aligned
    /// partition reported its end by round `round - LAG`. A pure function of those reports, so
    /// every shard finds the same end.
    pub fn rounds(&self, round: u64, fixed: u64) -> Rounds {
        let Ok(mut end) = self.end.lock() else {
            return Rounds::Go;
        };
        if let Some(e) = *end {
            return if round >= e { Rounds::End } else { Rounds::Go };
        }
        if round < fixed.max(LAG) {
            return Rounds::Go;
        }
        let Ok(parts) = self.parts.lock() else {
            return Rounds::Go;
        };
        let mut all_done = true;
        for q in parts.iter().filter(|q| q.drift_ms.is_some()) {
            if round - LAG < q.base {
                // Trimmed: every aligned partition has read past this round, so it was not the end.
                return Rounds::Go;
            }
            match entry(q, round - LAG) {
                None => return Rounds::Wait,
                Some(&(_, h)) => all_done &= h == Holds::Done,
            }
        }
        if all_done {
            *end = Some(round);
            Rounds::End
        } else {
            Rounds::Go
        }
    }

    /// The first round past the end, once known.
    pub fn end_round(&self) -> Option<u64> {
        self.end.lock().ok().and_then(|e| *e)
    }

    /// Whether partition `part` reads its chunk of round `round` (`last`: its last chunk).
    pub fn decide(&self, part: u16, round: u64, last: bool) -> Decision {
        let Ok(mut parts) = self.parts.lock() else {
            return Decision::Read;
        };
        let p = part as usize;
        let Some(drift) = parts.get(p).and_then(|x| x.drift_ms) else {
            return Decision::Read;
        };
        if last || round < LAG {
            parts[p].next = round + 1;
            return Decision::Read;
        }
        let at = round - LAG;
        let mut slowest = i64::MAX;
        for q in parts.iter().filter(|q| q.drift_ms.is_some()) {
            let Some(&(max, holds)) = entry(q, at) else {
                return Decision::Wait;
            };
            if holds == Holds::Holding {
                slowest = slowest.min(watermark(max, q.ooo_ms));
            }
        }
        let own =
            entry(&parts[p], at).map_or(i64::MIN, |&(max, _)| watermark(max, parts[p].ooo_ms));
        parts[p].next = round + 1;
        trim(&mut parts);
        // Nothing holding: nobody to wait for. No data of its own yet: nothing to be ahead with.
        if own != i64::MIN && slowest != i64::MAX && own > slowest.saturating_add(drift) {
            parts[p].paused += 1;
            Decision::SitOut
        } else {
            Decision::Read
        }
    }

    /// Per partition: rounds it sat out (for the run summary).
    pub fn paused(&self) -> Vec<u64> {
        self.parts
            .lock()
            .map(|p| p.iter().map(|x| x.paused).collect())
            .unwrap_or_default()
    }

    /// The end of partition `part`'s chunk of `round`: its largest event time (`i64::MIN`: none)
    /// and whether it still holds the watermark back.
    pub fn report(&self, part: u16, round: u64, chunk_max: i64, holds: Holds) {
        let Ok(mut parts) = self.parts.lock() else {
            return;
        };
        let Some(p) = parts
            .get_mut(part as usize)
            .filter(|p| p.drift_ms.is_some())
        else {
            return;
        };
        let prev = p.hist.back().map_or(i64::MIN, |e| e.0);
        if round < p.base + p.hist.len() as u64 {
            return; // reported already
        }
        // Rounds are reported in order; a gap (never expected) repeats the last state.
        while p.base + (p.hist.len() as u64) < round {
            let last = p.hist.back().copied().unwrap_or((i64::MIN, Holds::Holding));
            p.hist.push_back(last);
        }
        p.hist.push_back((prev.max(chunk_max), holds));
    }
}

fn watermark(max: i64, ooo: i64) -> i64 {
    if max == i64::MIN {
        i64::MIN
    } else {
        max.saturating_sub(ooo)
    }
}

fn entry(p: &Part, round: u64) -> Option<&(i64, Holds)> {
    round
        .checked_sub(p.base)
        .and_then(|i| p.hist.get(i as usize))
}

/// Drops reports no decision can ask for again: below the earliest next round minus `LAG`.
fn trim(parts: &mut [Part]) {
    let Some(low) = parts
        .iter()
        .filter(|p| p.drift_ms.is_some())
        .map(|p| p.next)
        .min()
    else {
        return;
    };
    let keep_from = low.saturating_sub(LAG);
    for p in parts.iter_mut() {
        while p.base < keep_from && p.hist.len() > 1 {
            p.hist.pop_front();
            p.base += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two(drift: i64) -> LogAlign {
        LogAlign::new(&[Some((drift, 0, None)), Some((drift, 0, None)), None]).unwrap()
    }

    #[test]
    fn the_first_rounds_read_and_later_ones_wait_for_their_reports() {
        let a = two(1_000);
        for r in 0..LAG {
            assert_eq!(a.decide(0, r, false), Decision::Read);
        }
        assert_eq!(a.decide(0, LAG, false), Decision::Wait);
        a.report(0, 0, 100, Holds::Holding);
        assert_eq!(
            a.decide(0, LAG, false),
            Decision::Wait,
            "partition 1 has not reported"
        );
        a.report(1, 0, 50, Holds::Holding);
        assert_eq!(a.decide(0, LAG, false), Decision::Read);
        // Not aligned: always reads.
        assert_eq!(a.decide(2, 99, false), Decision::Read);
    }

    #[test]
    fn a_partition_ahead_by_more_than_the_drift_sits_out_until_the_slowest_catches_up() {
        let a = two(1_000);
        a.report(0, 0, 10_000, Holds::Holding);
        a.report(1, 0, 8_000, Holds::Holding);
        assert_eq!(a.decide(0, LAG, false), Decision::SitOut);
        assert_eq!(
            a.decide(1, LAG, false),
            Decision::Read,
            "the slowest never sits out"
        );
        // Its last chunk is read regardless.
        assert_eq!(a.decide(0, LAG, true), Decision::Read);
        a.report(0, 1, i64::MIN, Holds::Holding);
        a.report(1, 1, 9_500, Holds::Holding);
        assert_eq!(
            a.decide(0, LAG + 1, false),
            Decision::Read,
            "within the drift now"
        );
    }

    #[test]
    fn idle_and_finished_partitions_hold_nobody_back() {
        let a = two(1_000);
        a.report(0, 0, 10_000, Holds::Holding);
        a.report(1, 0, 1_000, Holds::Idle);
        assert_eq!(a.decide(0, LAG, false), Decision::Read);
        // A partition with no data yet that still holds keeps the others back, as it holds the
        // watermark back, until it has data or turns idle.
        let b = two(1_000);
        b.report(0, 0, 10_000, Holds::Holding);
        b.report(1, 0, i64::MIN, Holds::Holding);
        assert_eq!(b.decide(0, LAG, false), Decision::SitOut);
        assert_eq!(b.decide(1, LAG, false), Decision::Read);
    }

    #[test]
    fn a_bounded_job_ends_once_every_aligned_partition_reported_its_end() {
        let a = two(1_000);
        assert_eq!(a.rounds(2, 0), Rounds::Go);
        for r in 0..3 {
            a.report(0, r, 10, if r == 2 { Holds::Done } else { Holds::Holding });
            a.report(1, r, 10, Holds::Done);
        }
        assert_eq!(
            a.rounds(LAG + 5, 100),
            Rounds::Go,
            "other partitions still have chunks"
        );
        assert_eq!(
            a.rounds(LAG, 0),
            Rounds::Go,
            "round 0: partition 0 still had data"
        );
        assert_eq!(a.rounds(LAG + 2, 0), Rounds::End);
        assert_eq!(a.end_round(), Some(LAG + 2));
        assert_eq!(a.rounds(LAG + 1, 0), Rounds::Go);
        assert_eq!(a.rounds(LAG + 9, 0), Rounds::End);
        let b = two(1_000);
        assert_eq!(b.rounds(LAG, 0), Rounds::Wait, "nothing reported yet");
    }

    #[test]
    fn old_reports_are_trimmed_but_the_ones_still_needed_stay() {
        let a = two(1_000_000);
        for r in 0..100 {
            a.report(0, r, r as i64, Holds::Holding);
            a.report(1, r, r as i64, Holds::Holding);
            assert_eq!(a.decide(0, r + LAG, false), Decision::Read);
            assert_eq!(a.decide(1, r + LAG, false), Decision::Read);
        }
        let parts = a.parts.lock().unwrap();
        assert!(
            parts[0].hist.len() <= LAG as usize + 2,
            "{}",
            parts[0].hist.len()
        );
    }
}
