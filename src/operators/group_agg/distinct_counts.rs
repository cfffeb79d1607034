//! Retractable COUNT(DISTINCT) for the group aggregate over an updating input (Flink's distinct
//! aggregate, which keeps a count per value): per group and aggregate, how many rows hold each
//! distinct value (by the hash the distinct counter keeps), so a retraction takes a value out of
//! the group's distinct set only with its last row. The accumulator's exact counter (the window's,
//! `window::distinct`) then renders the count as any other. State is in checkpoints by the group's
//! key (hash and bytes), so a restore onto another shard count finds each group's row again.

use std::collections::HashMap;

use crate::checkpoint::codec::{Dec, Enc};
use crate::operators::window::aggregate::Sketches;

/// One group's values of one aggregate: rows per value hash.
#[derive(Debug, Default)]
struct Counts {
    hash: u64,
    key: Vec<u8>,
    rows: HashMap<u64, u64>,
}

/// The COUNT(DISTINCT) aggregates of a group aggregate that must take values back.
#[derive(Debug, Default)]
pub struct DistinctCounts {
    /// The first accumulator word of each COUNT(DISTINCT).
    specs: Vec<usize>,
    /// By (group row, position in `specs`).
    values: HashMap<(usize, usize), Counts>,
}

impl DistinctCounts {
    pub fn new(specs: Vec<usize>) -> DistinctCounts {
        DistinctCounts {
            specs,
            values: HashMap::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// The accumulator word of spec `s` (its distinct counter's index).
    pub fn word(&self, s: usize) -> usize {
        self.specs[s]
    }

    /// Counts a row of value hash `h` in (or, `back`, out of) spec `s` of group row `r` (key
    /// `key`); its last row taken back takes the value out of the counter `counter` names (the
    /// spec's accumulator word). The counter itself took the value in when the row was added.
    pub fn apply(
        &mut self,
        (r, s): (usize, usize),
        (hash, key): (u64, &[u8]),
        h: u64,
        back: bool,
        (counter, sketches): (u64, &mut Sketches),
    ) {
        let c = self.values.entry((r, s)).or_insert_with(|| Counts {
            hash,
            key: key.to_vec(),
            rows: HashMap::new(),
        });
        if !back {
            *c.rows.entry(h).or_insert(0) += 1;
            return;
        }
        // A value never added: nothing to take back (the group aggregate ignores it too).
        let Some(n) = c.rows.get_mut(&h) else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            c.rows.remove(&h);
            sketches.remove(counter, h);
        }
    }

    /// Forgets group row `r`'s values (its rows were all taken back).
    pub fn clear(&mut self, r: usize) {
        for s in 0..self.specs.len() {
            self.values.remove(&(r, s));
        }
    }

    /// Values held, for the state size.
    pub fn bytes(&self) -> usize {
        (self.values.values())
            .map(|c| 64 + c.key.len() + c.rows.capacity() * 17)
            .sum()
    }

    pub fn encode(&self, e: &mut Enc) {
        e.u64(self.values.len() as u64);
        for (&(_, s), c) in &self.values {
            e.u64(c.hash);
            e.bytes(&c.key);
            e.u64(s as u64);
            let mut rows: Vec<(u64, u64)> = c.rows.iter().map(|(&h, &n)| (h, n)).collect();
            rows.sort_unstable();
            e.u64(rows.len() as u64);
            for (h, n) in rows {
                e.u64(h);
                e.u64(n);
            }
        }
    }

    /// Reads what [`DistinctCounts::encode`] wrote, for the groups `keep` accepts; `row` finds
    /// (or makes) a group's row by its hash and key.
    pub fn decode(
        &mut self,
        d: &mut Dec<'_>,
        keep: &dyn Fn(u64) -> bool,
        row: &mut dyn FnMut(u64, &[u8]) -> usize,
    ) -> Result<(), String> {
        let n = d.count(33, "distinct count groups")?;
        for _ in 0..n {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let s = usize::try_from(d.u64("aggregate")?).map_err(|_| "aggregate index")?;
            if s >= self.specs.len() {
                return Err(format!(
                    "COUNT(DISTINCT) state for aggregate {s} of {}",
                    self.specs.len()
                ));
            }
            let m = d.count(16, "distinct values")?;
            let mut rows = HashMap::with_capacity(m);
            for _ in 0..m {
                let h = d.u64("value hash")?;
                let count = d.u64("value rows")?;
                if count == 0 || rows.insert(h, count).is_some() {
                    return Err("a COUNT(DISTINCT) value held by no row, or twice".into());
                }
            }
            if !keep(hash) {
                continue;
            }
            let r = row(hash, key);
            let c = Counts {
                hash,
                key: key.to_vec(),
                rows,
            };
            if self.values.insert((r, s), c).is_some() {
                return Err("a group's COUNT(DISTINCT) state appears twice".into());
            }
        }
        Ok(())
    }
}
