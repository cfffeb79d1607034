//! The global chunk order every shard agrees on, computed from partition sizes alone.
//!
//! Chunk `seq` is produced by shard `seq % shards`; receivers consume chunks in `seq` order. Chunks
//! interleave partitions round-robin: round `r` holds chunk `r` of every partition that has more than
//! `r` chunks (unbounded partitions have chunks in every round). Because the order is a pure function of
//! the plan and the input sizes, output never depends on thread timing.

/// Chunks of one partition: `None` = unbounded.
pub type ChunkCount = Option<u64>;

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
