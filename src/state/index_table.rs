//! A hash index from a key's hash to a small dense index, one word per entry, that a caller can
//! prefetch: the index beneath `operators::rows::Keys`.
//!
//! The join and dedupe key indices outgrow the cache (a 10 s join holds hundreds of thousands of
//! keys per shard), so every lookup is bound by cache misses. hashbrown keeps its control bytes
//! apart from its entries (two lines per lookup) and cannot say where a key will be; here an entry
//! is one `u64`, `0` (empty) or `high << 32 | (index + 1)` with `high` the hash's high half, in an
//! open-addressing table with linear probing (load at most 3/4: eight entries share a line, so
//! even a long probe mostly stays in it), so a lookup reads one line that
//! [`IndexTable::prefetch`] can bring in ahead. The caller confirms a candidate by its own copy of
//! the key (entries with the same `high` are all offered). Removal shifts the following entries
//! back (no tombstones), so a table that keys come and go through never degrades.

use super::prefetch::prefetch;

/// Fibonacci hashing of the high half: the home uses all its bits, whatever range of key groups
/// (the hash's top bits) the shard owns.
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// Entries of a new table (a power of two).
const INITIAL: usize = 16;

pub struct IndexTable {
    slots: Vec<u64>,
    /// `64 - log2(slots.len())`.
    shift: u32,
    len: usize,
}

impl Default for IndexTable {
    fn default() -> Self {
        IndexTable {
            slots: vec![0; INITIAL],
            shift: 64 - INITIAL.trailing_zeros(),
            len: 0,
        }
    }
}

/// The hash's high half: what an entry keeps of it.
#[inline(always)]
fn high(hash: u64) -> u32 {
    (hash >> 32) as u32
}

/// The index an entry holds.
#[inline(always)]
fn index_of(entry: u64) -> u32 {
    (entry as u32).wrapping_sub(1)
}

impl IndexTable {
    #[inline(always)]
    fn home(&self, high: u32) -> usize {
        (u64::from(high).wrapping_mul(MIX) >> self.shift) as usize
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Hints that a lookup of `hash` comes soon.
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        prefetch(self.slots.as_ptr().wrapping_add(self.home(high(hash))));
    }

    /// Where the first entry under `hash` whose index `is(index)` confirms is.
    #[inline]
    fn position(&self, hash: u64, mut is: impl FnMut(u32) -> bool) -> Option<usize> {
        let h = high(hash);
        let mut at = self.home(h);
        loop {
            let e = self.slots[at];
            if e == 0 {
                return None;
            }
            if (e >> 32) as u32 == h && is(index_of(e)) {
                return Some(at);
            }
            at = (at + 1) & self.mask();
        }
    }

    /// The first index with hash `hash` that `is(index)` confirms.
    #[inline]
    pub fn find(&self, hash: u64, is: impl FnMut(u32) -> bool) -> Option<u32> {
        self.position(hash, is).map(|at| index_of(self.slots[at]))
    }

    /// The first index with `hash`'s high half (unconfirmed: for a prefetch).
    #[inline]
    pub fn candidate(&self, hash: u64) -> Option<u32> {
        self.find(hash, |_| true)
    }

    /// Adds `index` under `hash` (the caller knows it is not there). `index < u32::MAX`.
    pub fn insert(&mut self, hash: u64, index: u32) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        self.place(u64::from(high(hash)) << 32 | u64::from(index.wrapping_add(1)));
        self.len += 1;
    }

    fn place(&mut self, entry: u64) {
        let mut at = self.home((entry >> 32) as u32);
        while self.slots[at] != 0 {
            at = (at + 1) & self.mask();
        }
        self.slots[at] = entry;
    }

    #[cold]
    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, vec![0; n]);
        self.shift -= 1;
        for e in old.into_iter().filter(|&e| e != 0) {
            self.place(e);
        }
    }

    /// Removes `index`, which was inserted under `hash`; false when it is not there.
    pub fn remove(&mut self, hash: u64, index: u32) -> bool {
        let Some(mut hole) = self.position(hash, |i| i == index) else {
            return false;
        };
        // Shift back every following entry of the cluster whose home is not between the hole and
        // it, so that each entry stays reachable from its home without passing an empty slot.
        let mut at = hole;
        loop {
            at = (at + 1) & self.mask();
            let e = self.slots[at];
            if e == 0 {
                break;
            }
            let home = self.home((e >> 32) as u32);
            let ahead = at.wrapping_sub(home) & self.mask();
            let gap = at.wrapping_sub(hole) & self.mask();
            if ahead >= gap {
                self.slots[hole] = e;
                hole = at;
            }
        }
        self.slots[hole] = 0;
        self.len -= 1;
        true
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes allocated.
    pub fn bytes(&self) -> u64 {
        (self.slots.len() * 8) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// Against a map: every inserted index is found under its hash until removed, whatever the
        /// interleaving, with hashes crowded into few high halves (long clusters, many candidates).
        #[test]
        fn finds_what_a_map_holds(ops in proptest::collection::vec((0u8..3, 0u32..200, 0u64..40), 1..2000)) {
            let mut t = IndexTable::default();
            let mut model: HashMap<u32, u64> = HashMap::new();
            for (op, index, h) in ops {
                let hash = (h % 7) << 40 | h;
                match (op, model.get(&index).copied()) {
                    (0, None) => {
                        t.insert(hash, index);
                        model.insert(index, hash);
                    }
                    (1, Some(was)) => {
                        prop_assert!(t.remove(was, index));
                        model.remove(&index);
                    }
                    (1, None) => prop_assert!(!t.remove(hash, index)),
                    _ => {}
                }
                prop_assert_eq!(t.len(), model.len());
                for (&i, &hash) in &model {
                    prop_assert_eq!(t.find(hash, |j| j == i), Some(i));
                }
                prop_assert_eq!(t.find(hash, |j| !model.contains_key(&j)), None);
            }
        }
    }

    #[test]
    fn grows_and_shrinks_back_to_empty() {
        let mut t = IndexTable::default();
        let hash = |i: u32| u64::from(i).wrapping_mul(0xff51_afd7_ed55_8ccd);
        for i in 0..100_000 {
            t.insert(hash(i), i);
        }
        assert!(t.bytes() >= 100_000 * 8 * 4 / 3);
        for i in (0..100_000).step_by(3) {
            assert_eq!(t.find(hash(i), |j| j == i), Some(i));
        }
        for i in 0..100_000 {
            assert!(t.remove(hash(i), i));
        }
        assert!(t.is_empty());
        assert!(t.slots.iter().all(|&e| e == 0));
    }
}
