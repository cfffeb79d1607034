//! The chunk order under watermark alignment (`watermark.max_drift`): rounds of chunks like the
//! fixed schedule's, except that a partition whose watermark has run more than its source's
//! `max_drift` ahead of the slowest aligned partition sits rounds out until the others catch up, so
//! a fast file does not fill window and join state with rows that cannot fire yet.
//!
//! Round `r` is decided from the chunks of rounds `..= r - LAG` alone: their maximum event times,
//! which the producing shards publish as they finish each chunk. Those are facts of the input, so
//! the order is still a pure function of the plan and the data, every shard derives the same one,
//! and output never depends on thread timing. `LAG` rounds may be in flight at once; a partition can
//! overshoot the drift by at most that many of its chunks.
//!
//! The state is shared by the shards behind one mutex, taken once per chunk started or finished,
//! never per event. It travels in checkpoints, because a resumed run must continue the same order.
//! This module never reads input or touches rings.

use crate::checkpoint::codec::{Dec, Enc};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Rounds decided ahead of the newest round whose chunks have all reported.
pub const LAG: u64 = 4;

/// What the order says about one chunk sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Partition and that partition's chunk index.
    Chunk(u16, u64),
    /// Not decided yet: earlier chunks must report their event times first.
    Wait,
    /// An empty slot (log rounds are padded to a multiple of the shard count): an empty chunk.
    Pad,
    /// Past the last chunk.
    End,
}

/// One partition's place in the alignment.
#[derive(Debug, Clone, Copy)]
pub struct AlignedPart {
    /// Chunks in the partition; `None` = unbounded.
    pub chunks: Option<u64>,
    pub max_out_of_orderness_ms: i64,
    /// The source's `max_drift`; `None`: the partition is never paused (nor holds others back).
    pub max_drift_ms: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
struct Round {
    first_seq: u64,
    parts: Vec<u16>,
    ks: Vec<u64>,
    /// Maximum event time of each chunk, once its producer has finished it (`i64::MIN`: no events).
    maxes: Vec<Option<i64>>,
}

#[derive(Debug, Clone, PartialEq)]
struct State {
    /// Absolute index of `rounds[0]`.
    base: u64,
    rounds: VecDeque<Round>,
    /// Rounds `< folded` are in `known`.
    folded: u64,
    next_k: Vec<u64>,
    /// Largest event time of each partition over the folded rounds.
    known: Vec<i64>,
    total: Option<u64>,
}

pub struct AlignedOrder {
    parts: Vec<AlignedPart>,
    state: Mutex<State>,
    /// Per shard: the next chunk it will receive (rounds wholly before every shard's are dropped).
    received: Vec<AtomicU64>,
    /// Per partition: rounds it sat out because it was too far ahead (the metric).
    pub paused: Vec<AtomicU64>,
    /// `total` once known, readable without the lock (u64::MAX until then).
    total: AtomicU64,
}

impl AlignedOrder {
    pub fn new(parts: Vec<AlignedPart>, shards: usize) -> AlignedOrder {
        let n = parts.len();
        AlignedOrder {
            state: Mutex::new(State {
                base: 0,
                rounds: VecDeque::new(),
                folded: 0,
                next_k: vec![0; n],
                known: vec![i64::MIN; n],
                total: None,
            }),
            paused: (0..n).map(|_| AtomicU64::new(0)).collect(),
            received: (0..shards.max(1)).map(|_| AtomicU64::new(0)).collect(),
            total: AtomicU64::new(u64::MAX),
            parts,
        }
    }

    /// Total chunks, once the order has reached the end of every partition.
    pub fn total(&self) -> Option<u64> {
        match self.total.load(Ordering::Acquire) {
            u64::MAX => None,
            t => Some(t),
        }
    }

    pub fn chunk(&self, seq: u64) -> Next {
        let mut s = self.lock();
        loop {
            if s.total.is_some_and(|t| seq >= t) {
                return Next::End;
            }
            if let Some(r) = s.round_of(seq) {
                let i = (seq - r.first_seq) as usize;
                return Next::Chunk(r.parts[i], r.ks[i]);
            }
            if !self.extend(&mut s) {
                return match s.total {
                    Some(t) if seq >= t => Next::End,
                    _ => Next::Wait,
                };
            }
        }
    }

    /// The producer of chunk `seq` finished it; `max_ts` is its largest event time.
    pub fn finished(&self, seq: u64, max_ts: i64) {
        let mut s = self.lock();
        let Some(ri) = s
            .rounds
            .partition_point(|r| r.first_seq <= seq)
            .checked_sub(1)
        else {
            return;
        };
        let r = &mut s.rounds[ri];
        if let Some(m) = r.maxes.get_mut((seq - r.first_seq) as usize) {
            *m = Some(max_ts);
        }
    }

    /// Shard `shard` will next receive chunk `seq`.
    #[inline]
    pub fn received(&self, shard: usize, seq: u64) {
        if let Some(r) = self.received.get(shard) {
            r.store(seq, Ordering::Relaxed);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A shard that panicked holding the lock fails the run anyway; the state is still whole
        // (every update leaves it consistent), so carry on rather than cascade panics.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Decides one more round; false when it depends on chunks not yet finished.
    fn extend(&self, s: &mut State) -> bool {
        let next_round = s.base + s.rounds.len() as u64;
        // Fold every round at least LAG behind the one being decided.
        while s.folded + LAG <= next_round {
            let Some(r) = s.rounds.get((s.folded - s.base) as usize) else {
                break;
            };
            if r.maxes.iter().any(Option::is_none) {
                return false;
            }
            let updates: Vec<(u16, i64)> = r
                .parts
                .iter()
                .zip(&r.maxes)
                .map(|(&p, m)| (p, m.unwrap_or(i64::MIN)))
                .collect();
            for (p, m) in updates {
                let k = &mut s.known[p as usize];
                *k = (*k).max(m);
            }
            s.folded += 1;
        }
        self.prune(s);
        let first_seq = s
            .rounds
            .back()
            .map_or(0, |r| r.first_seq + r.parts.len() as u64);
        let live = |p: usize, s: &State| self.parts[p].chunks.is_none_or(|c| s.next_k[p] < c);
        let est = |p: usize, s: &State| {
            s.known[p].saturating_sub(self.parts[p].max_out_of_orderness_ms.max(0))
        };
        let slowest = (0..self.parts.len())
            .filter(|&p| live(p, s) && self.parts[p].max_drift_ms.is_some())
            .map(|p| est(p, s))
            .min();
        let mut round = Round {
            first_seq,
            parts: Vec::new(),
            ks: Vec::new(),
            maxes: Vec::new(),
        };
        for p in 0..self.parts.len() {
            if !live(p, s) {
                continue;
            }
            if let (Some(drift), Some(slow)) = (self.parts[p].max_drift_ms, slowest) {
                if est(p, s) > slow.saturating_add(drift) {
                    self.paused[p].fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            }
            round.parts.push(p as u16);
            round.ks.push(s.next_k[p]);
            round.maxes.push(None);
            s.next_k[p] += 1;
        }
        if round.parts.is_empty() {
            // The slowest aligned partition is never paused, so an empty round means every
            // partition has ended.
            s.total = Some(first_seq);
            self.total.store(first_seq, Ordering::Release);
            return false;
        }
        s.rounds.push_back(round);
        true
    }

    /// Drops folded rounds that every shard has received past.
    fn prune(&self, s: &mut State) {
        let low = self
            .received
            .iter()
            .map(|r| r.load(Ordering::Relaxed))
            .min()
            .unwrap_or(0);
        while s.base < s.folded {
            let Some(r) = s.rounds.front() else { break };
            if r.first_seq + r.parts.len() as u64 > low || s.rounds.len() == 1 {
                break;
            }
            s.rounds.pop_front();
            s.base += 1;
        }
    }

    /// The order's state for a checkpoint (every decided round still needed, and what was folded).
    pub fn encode(&self, e: &mut Enc) {
        let s = self.lock();
        e.u64(s.base);
        e.u64(s.folded);
        e.u64(s.total.unwrap_or(u64::MAX));
        e.u32(s.next_k.len() as u32);
        for (k, m) in s.next_k.iter().zip(&s.known) {
            e.u64(*k);
            e.i64(*m);
        }
        e.u64(s.rounds.len() as u64);
        for r in &s.rounds {
            e.u64(r.first_seq);
            e.u64(r.parts.len() as u64);
            for i in 0..r.parts.len() {
                e.u32(u32::from(r.parts[i]));
                e.u64(r.ks[i]);
                match r.maxes[i] {
                    Some(m) => {
                        e.u8(1);
                        e.i64(m);
                    }
                    None => e.u8(0),
                }
            }
        }
    }

    /// Continues the order a checkpoint recorded; the partitions must be the same.
    pub fn decode(&self, d: &mut Dec) -> Result<(), String> {
        let base = d.u64("alignment base")?;
        let folded = d.u64("alignment folded")?;
        let total = match d.u64("alignment total")? {
            u64::MAX => None,
            t => Some(t),
        };
        let n = d.u32("alignment partitions")? as usize;
        if n != self.parts.len() {
            return Err(format!(
                "the checkpoint's chunk order covers {n} partitions; this job has {}",
                self.parts.len()
            ));
        }
        let mut next_k = Vec::with_capacity(n);
        let mut known = Vec::with_capacity(n);
        for _ in 0..n {
            next_k.push(d.u64("alignment next chunk")?);
            known.push(d.i64("alignment event time")?);
        }
        let rounds_n = d.count(12, "alignment rounds")?;
        let mut rounds = VecDeque::with_capacity(rounds_n);
        for _ in 0..rounds_n {
            let first_seq = d.u64("round first chunk")?;
            let m = d.count(13, "round partitions")?;
            let mut r = Round {
                first_seq,
                parts: Vec::with_capacity(m),
                ks: Vec::with_capacity(m),
                maxes: Vec::with_capacity(m),
            };
            for _ in 0..m {
                let p = d.u32("round partition")?;
                if p as usize >= n {
                    return Err(format!("round names partition {p} of {n}"));
                }
                r.parts.push(p as u16);
                r.ks.push(d.u64("round chunk")?);
                r.maxes.push(match d.u8("round reported")? {
                    0 => None,
                    _ => Some(d.i64("round event time")?),
                });
            }
            rounds.push_back(r);
        }
        let mut s = self.lock();
        *s = State {
            base,
            rounds,
            folded,
            next_k,
            known,
            total,
        };
        self.total
            .store(total.unwrap_or(u64::MAX), Ordering::Release);
        Ok(())
    }
}

impl State {
    fn round_of(&self, seq: u64) -> Option<&Round> {
        let i = self
            .rounds
            .partition_point(|r| r.first_seq <= seq)
            .checked_sub(1)?;
        let r = &self.rounds[i];
        (seq < r.first_seq + r.parts.len() as u64).then_some(r)
    }
}

#[cfg(test)]
mod tests;
