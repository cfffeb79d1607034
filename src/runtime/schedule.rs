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
    /// A job that reads logs (alone or with files and the generator): rounds of one chunk of
    /// every partition, laid out so that log partition `i`'s chunks always fall to shard
    /// `i % shards` (the one whose consumer owns it); see [`Mixed`].
    Mixed(Mixed),
}

/// The round layout of a job with log partitions. A round has `cells.len()` slots (a multiple
/// of the shard count, slot `j` produced by shard `j % shards`): each log partition sits in a
/// slot of its shard's column, the other partitions fill the free slots in order, the rest is
/// padding. Round `r` holds chunk `r` of every partition that has more than `r` chunks (their
/// slots are padding after that), so the order is still a pure function of the chunk counts.
#[derive(Debug, Clone)]
pub struct Mixed {
    cells: Vec<Option<u16>>,
    counts: Vec<ChunkCount>,
    total: Option<u64>,
    /// Watermark alignment of log partitions; `Some(fixed)` also when the job is bounded: its
    /// aligned partitions run as many rounds as alignment makes them need (their counts are
    /// `None` here), the others end by round `fixed`.
    align: Option<(std::sync::Arc<super::log_align::LogAlign>, Option<u64>)>,
}

impl Mixed {
    /// `pinned[p]`: the shard partition `p` must be read by (a log), or `None` (any shard).
    pub fn new(counts: &[ChunkCount], pinned: &[Option<usize>], shards: usize) -> Mixed {
        let n = shards.max(1);
        let mut per_column = vec![0usize; n];
        for s in pinned.iter().flatten() {
            per_column[s % n] += 1;
        }
        let rows = per_column
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
            .max((pinned.len()).div_ceil(n))
            .max(1);
        let mut cells: Vec<Option<u16>> = vec![None; rows * n];
        let mut next_row = vec![0usize; n];
        for (p, s) in pinned.iter().enumerate() {
            if let Some(s) = s {
                let col = s % n;
                cells[next_row[col] * n + col] = Some(p as u16);
                next_row[col] += 1;
            }
        }
        let mut others = pinned
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_none())
            .map(|(p, _)| p as u16);
        for cell in cells.iter_mut() {
            if cell.is_none() {
                match others.next() {
                    Some(p) => *cell = Some(p),
                    None => break,
                }
            }
        }
        // Every free partition found a cell: rows * shards >= partitions.
        let total = counts
            .iter()
            .try_fold(0u64, |m, c| c.map(|c| m.max(c)))
            .map(|rounds| rounds * cells.len() as u64);
        Mixed {
            cells,
            counts: counts.to_vec(),
            total,
            align: None,
        }
    }

    /// With log alignment; `bounded_by`: the job is bounded, its other partitions ending by
    /// that round.
    pub fn aligned(
        mut self,
        align: std::sync::Arc<super::log_align::LogAlign>,
        bounded_by: Option<u64>,
    ) -> Mixed {
        self.align = Some((align, bounded_by));
        self
    }

    fn total(&self) -> Option<u64> {
        self.total.or_else(|| match &self.align {
            Some((a, Some(_))) => a.end_round().map(|r| r * self.cells.len() as u64),
            _ => None,
        })
    }

    fn chunk(&self, seq: u64) -> Next {
        if self.total.is_some_and(|t| seq >= t) {
            return Next::End;
        }
        let len = self.cells.len() as u64;
        let (round, slot) = (seq / len, (seq % len) as usize);
        if let Some((a, Some(fixed))) = &self.align {
            use super::log_align::Rounds;
            match a.rounds(round, *fixed) {
                Rounds::Go => {}
                Rounds::End => return Next::End,
                Rounds::Wait => return Next::Wait,
            }
        }
        match self.cells[slot] {
            Some(p) if self.counts[p as usize].is_none_or(|c| round < c) => Next::Chunk(p, round),
            _ => Next::Pad,
        }
    }
}

impl ChunkOrder {
    pub fn chunk(&self, seq: u64) -> Next {
        match self {
            ChunkOrder::Fixed(s) => s.chunk(seq).map_or(Next::End, |(p, k)| Next::Chunk(p, k)),
            ChunkOrder::Aligned(a) => a.chunk(seq),
            ChunkOrder::Mixed(m) => m.chunk(seq),
        }
    }

    /// Total chunks; `None` while unknown (an unbounded partition, or an aligned order that has
    /// not reached the end yet).
    pub fn total(&self) -> Option<u64> {
        match self {
            ChunkOrder::Fixed(s) => s.total(),
            ChunkOrder::Aligned(a) => a.total(),
            ChunkOrder::Mixed(m) => m.total(),
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
            ChunkOrder::Fixed(_) | ChunkOrder::Mixed(_) => Vec::new(),
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
            ChunkOrder::Fixed(_) | ChunkOrder::Mixed(_) => e.u8(0),
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
            (ChunkOrder::Fixed(_) | ChunkOrder::Mixed(_), 0) => Ok(()),
            (ChunkOrder::Aligned(a), 1) => a.decode(d),
            (ChunkOrder::Fixed(_) | ChunkOrder::Mixed(_), _) => Err(
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
    fn mixed_rounds_keep_log_partitions_on_their_shard_and_files_anywhere() {
        // Partitions 0 and 2 are logs (shards 0 and 0 of 2), 1 and 3 files of 2 and 1 chunks.
        let counts = [Some(3), Some(2), Some(3), Some(1)];
        let pinned = [Some(0), None, Some(2), None];
        let m = Mixed::new(&counts, &pinned, 2);
        let order: Vec<Next> = (0..14).map(|q| m.chunk(q)).collect();
        for (q, n) in order.iter().enumerate() {
            if let Next::Chunk(p, _) = n {
                if let Some(s) = pinned[*p as usize] {
                    assert_eq!(q % 2, s % 2, "partition {p} at seq {q} falls to its shard");
                }
            }
        }
        let chunks: Vec<(u16, u64)> = order
            .iter()
            .filter_map(|n| match n {
                Next::Chunk(p, k) => Some((*p, *k)),
                _ => None,
            })
            .collect();
        let mut per: Vec<Vec<u64>> = vec![Vec::new(); 4];
        for (p, k) in chunks {
            per[p as usize].push(k);
        }
        assert_eq!(
            per,
            [vec![0, 1, 2], vec![0, 1], vec![0, 1, 2], vec![0]],
            "each chunk once, in order"
        );
        assert_eq!(m.total, Some(3 * 4));
        assert!(matches!(m.chunk(12), Next::End));
        let unbounded = Mixed::new(&[None, Some(1)], &[Some(1), None], 2);
        assert_eq!(unbounded.total, None);
        assert!(matches!(unbounded.chunk(1), Next::Chunk(0, 0)));
    }

    #[test]
    fn no_input_means_no_chunks() {
        let s = Schedule::new(&[Some(0)]);
        assert_eq!(s.total(), Some(0));
        assert_eq!(s.chunk(0), None);
    }
}
