//! The global chunk order every shard agrees on, computed from partition sizes alone.
//!
//! Chunk `seq` is produced by shard `seq % shards`; receivers consume chunks in `seq` order. Chunks
//! interleave partitions round-robin: round `r` holds chunk `r` of every partition that has more than
//! `r` chunks (unbounded partitions have chunks in every round). Because the order is a pure function of
//! the plan and the input sizes, output never depends on thread timing.

use super::aligned::{AlignedOrder, Next};
use crate::checkpoint::codec::{Dec, Enc};

/// Chunks of one partition: `None` = unbounded.
pub type ChunkCount = Option<u64>;

/// The order a run reads chunks in: fixed by sizes alone, or aligned on event time when some
/// source sets `watermark.max_drift` (see `runtime::aligned`).
pub enum ChunkOrder {
    Fixed(Schedule),
    Aligned(AlignedOrder),
    /// Kafka partitions: rounds of every partition padded with empty slots to a multiple of the
    /// shard count, so that partition `i`'s chunks always fall to shard `i % shards` (the one
    /// whose consumer owns it). All partitions have `count` chunks (`None`: unbounded).
    Padded {
        parts: u64,
        round: u64,
        count: Option<u64>,
    },
}

impl ChunkOrder {
    pub fn chunk(&self, seq: u64) -> Next {
        match self {
            ChunkOrder::Fixed(s) => s.chunk(seq).map_or(Next::End, |(p, k)| Next::Chunk(p, k)),
            ChunkOrder::Aligned(a) => a.chunk(seq),
            &ChunkOrder::Padded {
                parts,
                round,
                count,
            } => {
                let (k, slot) = (seq / round, seq % round);
                if count.is_some_and(|c| k >= c) {
                    Next::End
                } else if slot >= parts {
                    Next::Pad
                } else {
                    Next::Chunk(slot as u16, k)
                }
            }
        }
    }

    /// Total chunks; `None` while unknown (an unbounded partition, or an aligned order that has
    /// not reached the end yet).
    pub fn total(&self) -> Option<u64> {
        match self {
            ChunkOrder::Fixed(s) => s.total(),
            ChunkOrder::Aligned(a) => a.total(),
            ChunkOrder::Padded { round, count, .. } => count.map(|c| c * round),
        }
    }

    /// The producer of chunk `seq` finished it; `max_ts` is its largest event time.
    #[inline]
    pub fn finished(&self, seq: u64, max_ts: i64) {
        if let ChunkOrder::Aligned(a) = self {
            a.finished(seq, max_ts);
        }
    }

    /// Shard `shard` will next receive chunk `seq`.
    #[inline]
    pub fn received(&self, shard: usize, seq: u64) {
        if let ChunkOrder::Aligned(a) = self {
            a.received(shard, seq);
        }
    }

    /// Rounds each partition sat out for alignment (empty without alignment).
    pub fn paused(&self) -> Vec<u64> {
        match self {
            ChunkOrder::Fixed(_) | ChunkOrder::Padded { .. } => Vec::new(),
            ChunkOrder::Aligned(a) => a
                .paused
                .iter()
                .map(|p| p.load(std::sync::atomic::Ordering::Relaxed))
                .collect(),
        }
    }

    /// Appends the order's state to a checkpoint: a tag, and the aligned order's rounds.
    pub fn encode(&self, e: &mut Enc) {
        match self {
            ChunkOrder::Fixed(_) | ChunkOrder::Padded { .. } => e.u8(0),
            ChunkOrder::Aligned(a) => {
                e.u8(1);
                a.encode(e);
            }
        }
    }

    /// Continues from a checkpoint's order. Chunk numbers mean different things in the two
    /// orders, so a checkpoint resumes only into the same kind.
    pub fn decode(&self, d: &mut Dec) -> Result<(), String> {
        // Checkpoints from before alignment existed end here: they were taken in the fixed order.
        let tag = if d.is_empty() {
            0
        } else {
            d.u8("chunk order")?
        };
        match (self, tag) {
            (ChunkOrder::Fixed(_) | ChunkOrder::Padded { .. }, 0) => Ok(()),
            (ChunkOrder::Aligned(a), 1) => a.decode(d),
            (ChunkOrder::Fixed(_) | ChunkOrder::Padded { .. }, _) => Err(
                "the checkpoint was taken with watermark alignment (`max_drift`) and this job has \
                 none; chunk positions differ between the two orders, so restore it with the same \
                 `max_drift` settings"
                    .into(),
            ),
            (ChunkOrder::Aligned(_), _) => Err(
                "the checkpoint was taken without watermark alignment and this job sets \
                 `max_drift`; chunk positions differ between the two orders, so restore it without \
                 `max_drift`, finish or savepoint, then enable it"
                    .into(),
            ),
        }
    }
}

#[derive(Debug, Clone)]
struct Segment {
    first_seq: u64,
    first_round: u64,
    parts: Vec<u16>,
}

#[derive(Debug, Clone)]
pub struct Schedule {
    segments: Vec<Segment>,
    total: Option<u64>,
}

impl Schedule {
    pub fn new(counts: &[ChunkCount]) -> Schedule {
        Self::rounds(counts)
    }

    fn rounds(counts: &[ChunkCount]) -> Schedule {
        // Round boundaries are the distinct bounded counts; between two of them the active set is fixed.
        let mut bounds: Vec<u64> = counts
            .iter()
            .flatten()
            .copied()
            .filter(|&c| c > 0)
            .collect();
        bounds.sort_unstable();
        bounds.dedup();
        let mut segments = Vec::new();
        let mut seq = 0u64;
        let mut round = 0u64;
        for &b in &bounds {
            let parts = active(counts, round);
            let rounds = b - round;
            segments.push(Segment {
                first_seq: seq,
                first_round: round,
                parts: parts.clone(),
            });
            seq += rounds * parts.len() as u64;
            round = b;
        }
        let unbounded = active(counts, round);
        let total = if unbounded.is_empty() {
            Some(seq)
        } else {
            segments.push(Segment {
                first_seq: seq,
                first_round: round,
                parts: unbounded,
            });
            None
        };
        Schedule { segments, total }
    }

    /// Total chunks; `None` when some partition is unbounded.
    pub fn total(&self) -> Option<u64> {
        self.total
    }

    /// Partition and that partition's chunk index for global chunk `seq`; `None` past the end.
    pub fn chunk(&self, seq: u64) -> Option<(u16, u64)> {
        if self.total.is_some_and(|t| seq >= t) {
            return None;
        }
        let i = self.segments.partition_point(|s| s.first_seq <= seq) - 1;
        let s = &self.segments[i];
        let off = seq - s.first_seq;
        let n = s.parts.len() as u64;
        Some((s.parts[(off % n) as usize], s.first_round + off / n))
    }

    /// True when chunk `k` is the last chunk of partition `part`.
    pub fn is_last(counts: &[ChunkCount], part: u16, k: u64) -> bool {
        counts[part as usize].is_some_and(|c| k + 1 == c)
    }
}

fn active(counts: &[ChunkCount], round: u64) -> Vec<u16> {
    counts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_none_or(|c| c > round))
        .map(|(i, _)| i as u16)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(counts: &[ChunkCount], n: u64) -> Vec<(u16, u64)> {
        let s = Schedule::new(counts);
        (0..n).map_while(|q| s.chunk(q)).collect()
    }

    #[test]
    fn round_robin_until_short_partitions_end() {
        let got = order(&[Some(3), Some(1), Some(0), Some(2)], 100);
        assert_eq!(got, vec![(0, 0), (1, 0), (3, 0), (0, 1), (3, 1), (0, 2)]);
        assert_eq!(
            Schedule::new(&[Some(3), Some(1), Some(0), Some(2)]).total(),
            Some(6)
        );
    }

    #[test]
    fn unbounded_partition_continues_forever() {
        let s = Schedule::new(&[Some(2), None]);
        assert_eq!(s.total(), None);
        let got: Vec<_> = (0..6).map(|q| s.chunk(q).unwrap()).collect();
        assert_eq!(got, vec![(0, 0), (1, 0), (0, 1), (1, 1), (1, 2), (1, 3)]);
    }

    #[test]
    fn no_input_means_no_chunks() {
        let s = Schedule::new(&[Some(0)]);
        assert_eq!(s.total(), Some(0));
        assert_eq!(s.chunk(0), None);
    }
}
