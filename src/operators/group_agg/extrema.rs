//! Retractable MIN and MAX for the group aggregate over an updating input (Flink's
//! `MinWithRetractAggFunction`/`MaxWithRetractAggFunction`): per group and aggregate, every value
//! it holds with how many rows hold it, sorted, so a retraction of the current extreme falls back
//! to the next one. The accumulator words then hold the extreme as the window's MIN/MAX does, so
//! rows render as any other. State is in checkpoints by the group's key (hash and bytes), so a
//! restore onto another shard count finds each group's row again.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::checkpoint::codec::{Dec, Enc};
use crate::operators::window::numbers::{extreme, Num};

/// A value as the extreme's two words (`numbers::extreme`): kind and bits.
type Words = [u64; 2];

/// One group's values of one aggregate, in numeric order, with their row counts.
#[derive(Debug, Default)]
struct Values {
    hash: u64,
    key: Vec<u8>,
    sorted: Vec<(Words, u64)>,
}

fn words_of(n: Num) -> Words {
    let mut w = [0u64; 2];
    extreme::set(&mut w, n);
    w
}

fn num(w: &Words) -> Option<Num> {
    extreme::get(w)
}

/// Numeric order; equal numbers written differently (`2`, `2.0`) by their words.
fn order(a: &Words, b: &Words) -> Ordering {
    match (num(a), num(b)) {
        (Some(x), Some(y)) if x.less_than(y) => Ordering::Less,
        (Some(x), Some(y)) if y.less_than(x) => Ordering::Greater,
        _ => a.cmp(b),
    }
}

/// The MIN/MAX aggregates of a group aggregate that must take values back.
#[derive(Debug, Default)]
pub struct Extrema {
    /// (aggregate index, its first word, max?) for each MIN/MAX.
    specs: Vec<(usize, usize, bool)>,
    /// By (group row, position in `specs`).
    values: HashMap<(usize, usize), Values>,
}

impl Extrema {
    pub fn new(specs: Vec<(usize, usize, bool)>) -> Extrema {
        Extrema {
            specs,
            values: HashMap::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Adds (or, `back`, takes back) value `n` of spec `s` in group row `r` (key `key`), and
    /// writes the extreme into `accs`.
    pub fn apply(
        &mut self,
        r: usize,
        s: usize,
        (hash, key): (u64, &[u8]),
        n: Num,
        back: bool,
        accs: &mut [u64],
    ) {
        let (_, at, max) = self.specs[s];
        let v = self.values.entry((r, s)).or_insert_with(|| Values {
            hash,
            key: key.to_vec(),
            sorted: Vec::new(),
        });
        let w = words_of(n);
        match (v.sorted.binary_search_by(|(x, _)| order(x, &w)), back) {
            (Ok(i), false) => v.sorted[i].1 += 1,
            (Err(i), false) => v.sorted.insert(i, (w, 1)),
            (Ok(i), true) => {
                v.sorted[i].1 -= 1;
                if v.sorted[i].1 == 0 {
                    v.sorted.remove(i);
                }
            }
            // A value never added: nothing to take back (the group aggregate ignores it too).
            (Err(_), true) => {}
        }
        let best = if max {
            v.sorted.last()
        } else {
            v.sorted.first()
        };
        let slot = &mut accs[at..at + extreme::WORDS];
        match best.and_then(|(w, _)| num(w)) {
            Some(b) => extreme::set(slot, b),
            None => slot.fill(0),
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
        self.values
            .values()
            .map(|v| 64 + v.key.len() + v.sorted.capacity() * std::mem::size_of::<(Words, u64)>())
            .sum()
    }

    pub fn encode(&self, e: &mut Enc) {
        e.u64(self.values.len() as u64);
        for (&(_, s), v) in &self.values {
            e.u64(v.hash);
            e.bytes(&v.key);
            e.u64(s as u64);
            e.u64(v.sorted.len() as u64);
            for (w, n) in &v.sorted {
                e.u64(w[0]);
                e.u64(w[1]);
                e.u64(*n);
            }
        }
    }

    /// Reads what [`Extrema::encode`] wrote, for the groups `keep` accepts; `row` finds (or
    /// makes) a group's row by its hash and key.
    pub fn decode(
        &mut self,
        d: &mut Dec<'_>,
        keep: &dyn Fn(u64) -> bool,
        row: &mut dyn FnMut(u64, &[u8]) -> usize,
    ) -> Result<(), String> {
        let n = d.count(33, "retractable MIN/MAX groups")?;
        for _ in 0..n {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let s = usize::try_from(d.u64("aggregate")?).map_err(|_| "aggregate index")?;
            if s >= self.specs.len() {
                return Err(format!(
                    "MIN/MAX state for aggregate {s} of {}",
                    self.specs.len()
                ));
            }
            let m = d.count(24, "MIN/MAX values")?;
            let mut sorted = Vec::with_capacity(m);
            for _ in 0..m {
                let w = [d.u64("value")?, d.u64("value")?];
                let count = d.u64("value count")?;
                if num(&w).is_none() || count == 0 {
                    return Err("a MIN/MAX value that is not a number, or held by no row".into());
                }
                if sorted
                    .last()
                    .is_some_and(|(p, _)| order(p, &w) != Ordering::Less)
                {
                    return Err("MIN/MAX values out of order".into());
                }
                sorted.push((w, count));
            }
            if !keep(hash) {
                continue;
            }
            let r = row(hash, key);
            let v = Values {
                hash,
                key: key.to_vec(),
                sorted,
            };
            if self.values.insert((r, s), v).is_some() {
                return Err("a group's MIN/MAX state appears twice".into());
            }
        }
        Ok(())
    }
}
