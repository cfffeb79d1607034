//! The regular join's state: per key, a bag of rows on each side (each distinct row once, with
//! how many copies are held), and how many rows each side holds, which says whether a row has a
//! match. Rows are held by value in a [`RowStore`]; each key's rows of a side are a list through
//! their slots (arrival order, which is the order pairs are emitted in), and a hash index by
//! (key, side, row bytes) finds the row a retraction takes back without walking the list. A key
//! with no rows left is forgotten. With a join condition, each row also counts the other side's
//! rows it matches (Flink's association counts), since matching is then per row, not per key.

use hashbrown::HashTable;

use crate::checkpoint::codec::{Dec, Enc};
use crate::operators::keys::Keys;
use crate::operators::rows::{RowId, RowStore, Slab};

pub const LEFT: usize = 0;
pub const RIGHT: usize = 1;

/// No row: the end of a list.
const NIL: u32 = u32::MAX;

/// A held row's slot.
pub type Slot = u32;

#[derive(Debug, Clone, Copy)]
struct Entry {
    row: RowId,
    /// Its index hash (key, side and bytes).
    hash: u64,
    /// Copies held.
    copies: u64,
    key: u32,
    next: u32,
    prev: u32,
    side: u8,
}

/// A key's state: each side's list (first, last slot) and its rows, copies included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    lists: [[u32; 2]; 2],
    rows: [u64; 2],
}

impl Default for Held {
    fn default() -> Held {
        Held {
            lists: [[NIL; 2]; 2],
            rows: [0; 2],
        }
    }
}

#[derive(Default)]
pub struct Bags {
    keys: Keys<Held>,
    slab: Slab<Entry>,
    store: RowStore,
    index: HashTable<Slot>,
    /// Per slot, the other side's rows its row matches (with a join condition only).
    matches: Vec<u64>,
}

fn row_hash(k: u32, side: usize, row: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x0b16_5eed).hash_one((k, side as u8, row))
}

impl Bags {
    pub fn intern(&mut self, hash: u64, key: &[u8]) -> u32 {
        self.keys.intern(hash, key).0
    }

    /// The index of a key that holds rows.
    pub fn find_key(&self, hash: u64, key: &[u8]) -> Option<u32> {
        self.keys.find(hash, key)
    }

    pub fn prefetch(&self, hash: u64, stage: u8) {
        self.keys.prefetch(hash, stage);
    }

    /// Rows key `k` holds on each side, copies included.
    pub fn rows(&self, k: u32) -> [u64; 2] {
        self.keys.value(k).rows
    }

    /// Key `k`'s bytes.
    pub fn key(&self, k: u32) -> &[u8] {
        self.keys.get(k).map_or(&[][..], |(_, key)| key)
    }

    pub fn row(&self, slot: Slot) -> &[u8] {
        self.slab
            .get(slot)
            .map_or(&[][..], |e| self.store.get(e.row))
    }

    /// Key `k`'s rows of `side` as (slot, copies), in arrival order, into `out`.
    pub fn entries(&self, k: u32, side: usize, out: &mut Vec<(Slot, u64)>) {
        out.clear();
        let mut at = self.keys.value(k).lists[side][0];
        while let Some(e) = self.slab.get(at) {
            out.push((at, e.copies));
            at = e.next;
        }
    }

    fn find(&self, k: u32, side: usize, row: &[u8], hash: u64) -> Option<Slot> {
        let (slab, store) = (&self.slab, &self.store);
        self.index
            .find(hash, |&s| {
                slab.get(s).is_some_and(|e| {
                    e.key == k && usize::from(e.side) == side && store.get(e.row) == row
                })
            })
            .copied()
    }

    /// Holds one more copy of `row` on `side` of key `k`; its slot, and whether the row is new
    /// there (no copy of it was held).
    pub fn add(&mut self, k: u32, side: usize, row: &[u8]) -> (Slot, bool) {
        self.add_copies(k, side, row, 1)
    }

    fn add_copies(&mut self, k: u32, side: usize, row: &[u8], copies: u64) -> (Slot, bool) {
        self.keys.value_mut(k).rows[side] += copies;
        let hash = row_hash(k, side, row);
        if let Some(s) = self.find(k, side, row, hash) {
            self.slab.at(s).copies += copies;
            return (s, false);
        }
        let last = self.keys.value(k).lists[side][1];
        let slot = self.slab.insert(Entry {
            row: self.store.put(row),
            hash,
            copies,
            key: k,
            next: NIL,
            prev: last,
            side: side as u8,
        });
        match last {
            NIL => self.keys.value_mut(k).lists[side][0] = slot,
            l => self.slab.at(l).next = slot,
        }
        self.keys.value_mut(k).lists[side][1] = slot;
        let slab = &self.slab;
        self.index
            .insert_unique(hash, slot, |&s| slab.get(s).map_or(0, |e| e.hash));
        (slot, true)
    }

    /// How many rows of the other side (copies included) the row in `slot` matches under a join
    /// condition (kept only where there is one: without, matching is per key).
    pub fn matches(&self, slot: Slot) -> u64 {
        self.matches.get(slot as usize).copied().unwrap_or(0)
    }

    pub fn set_matches(&mut self, slot: Slot, n: u64) {
        let i = slot as usize;
        if self.matches.len() <= i {
            self.matches.resize(i + 1, 0);
        }
        self.matches[i] = n;
    }

    /// Every key holding rows, for a pass over the whole state (after a restore).
    pub fn held_keys(&self) -> Vec<u32> {
        (0..self.keys.slots())
            .filter(|&k| self.keys.get(k).is_some() && self.keys.value(k) != Held::default())
            .collect()
    }

    /// Takes one copy of `row` back from `side` of key `k`; false if none is held.
    pub fn remove(&mut self, k: u32, side: usize, row: &[u8]) -> bool {
        let hash = row_hash(k, side, row);
        let Some(slot) = self.find(k, side, row, hash) else {
            return false;
        };
        self.keys.value_mut(k).rows[side] -= 1;
        let e = self.slab.at(slot);
        e.copies -= 1;
        if e.copies > 0 {
            return true;
        }
        if let Ok(found) = self.index.find_entry(hash, |&s| s == slot) {
            found.remove();
        }
        let e = self.slab.remove(slot);
        let list = &mut self.keys.value_mut(k).lists[side];
        match e.prev {
            NIL => list[0] = e.next,
            p => self.slab.at(p).next = e.next,
        }
        match e.next {
            NIL => list[1] = e.prev,
            n => self.slab.at(n).prev = e.prev,
        }
        self.store.drop_row(e.row);
        true
    }

    /// Forgets key `k` if it holds no rows, so the key index stays as small as the keys held.
    pub fn forget_if_empty(&mut self, k: u32) {
        if self.keys.value(k) == Held::default() {
            self.keys.remove(k);
        }
    }

    pub fn keys(&self) -> usize {
        self.keys.len()
    }

    /// Allocated bytes (rows, slots, key index and row index).
    pub fn bytes(&self) -> u64 {
        self.slab.bytes()
            + (self.matches.capacity() * 8) as u64
            + self.keys.bytes()
            + self.store.bytes().1
            + (self.index.capacity() * std::mem::size_of::<Slot>()) as u64
    }

    /// Every key holding rows: its hash and bytes, then per side its distinct rows with copies.
    pub fn encode(&self, e: &mut Enc) {
        let held = self.held_keys();
        e.u64(held.len() as u64);
        let mut rows = Vec::new();
        for k in held {
            let Some((hash, key)) = self.keys.get(k) else {
                continue;
            };
            e.u64(hash);
            e.bytes(key);
            for side in [LEFT, RIGHT] {
                self.entries(k, side, &mut rows);
                e.u64(rows.len() as u64);
                for &(slot, copies) in &rows {
                    e.u64(copies);
                    e.bytes(self.row(slot));
                }
            }
        }
    }

    /// Adds the keys `keep` accepts from state written by [`Bags::encode`]; the rows added per
    /// side.
    pub fn decode(
        &mut self,
        d: &mut Dec<'_>,
        keep: &dyn Fn(u64) -> bool,
    ) -> Result<[u64; 2], String> {
        let mut added = [0u64; 2];
        let n = d.count(26, "join keys")?;
        for _ in 0..n {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let mut sides: [Vec<(u64, &[u8])>; 2] = [Vec::new(), Vec::new()];
            for rows in &mut sides {
                let m = d.count(16, "rows")?;
                for _ in 0..m {
                    let copies = d.u64("copies")?;
                    if copies == 0 {
                        return Err("a held row with no copies".into());
                    }
                    rows.push((copies, d.bytes("row")?));
                }
            }
            if !keep(hash) {
                continue;
            }
            let k = self.intern(hash, key);
            if self.keys.value(k) != Held::default() {
                return Err("a join key appears twice".into());
            }
            for (side, rows) in sides.into_iter().enumerate() {
                for (copies, row) in rows {
                    let (Some(held), Some(total)) = (
                        self.keys.value(k).rows[side].checked_add(copies),
                        added[side].checked_add(copies),
                    ) else {
                        return Err("a join key holds more rows than can be counted".into());
                    };
                    self.add_copies(k, side, row, copies);
                    debug_assert_eq!(self.keys.value(k).rows[side], held);
                    added[side] = total;
                }
            }
        }
        Ok(added)
    }
}
