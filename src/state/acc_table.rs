//! A hash table from group-by key to accumulator set, built so lookups can be prefetched.
//!
//! Aggregation over ~100k keys is bound by cache misses, not instructions: one miss for the table
//! slot, one for the key, one for the accumulators. hashbrown cannot say where a key's bucket is
//! before the lookup, so it cannot be prefetched; this table can ([`AccTable::prefetch_slot`],
//! [`AccTable::prefetch_entry`]), which lets the runtime overlap the misses of the next events with
//! the work on the current one.
//!
//! Layout: open addressing with linear probing over `slots` (power-of-two length, load <= 1/2).
//! A slot is `0` (empty) or `tag << 32 | (entry + 1)` where `tag` is the hash's high 32 bits.
//! Entries are dense, in insertion order: `keys[e]` (one 64-byte line with the full hash) and
//! `accs[e * n .. e * n + n]`. Entries are never removed one by one; a pane's table is cleared whole
//! when the watermark retires it, keeping its capacity for the next pane.

use super::prefetch::prefetch;
use crate::event::{keys_equal, Event, INLINE_KEY_BYTES};

/// Prefetch distances of [`AccTable::add_run`], in events: the slot first, the entry once the slot
/// is (likely) cached.
const SLOT_AHEAD: usize = 24;
const ENTRY_AHEAD: usize = 12;
use crate::operators::window::aggregate::{Acc, AggLayout};

#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct KeyEntry {
    pub hash: u64,
    pub len: u8,
    pub bytes: [u8; INLINE_KEY_BYTES],
}

impl KeyEntry {
    #[inline]
    pub fn key(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

pub struct AccTable {
    slots: Vec<u64>,
    mask: usize,
    keys: Vec<KeyEntry>,
    accs: Vec<Acc>,
    n: usize,
}

#[inline(always)]
fn tag(hash: u64) -> u64 {
    hash >> 32
}

impl AccTable {
    /// A table whose entries hold `n` accumulators each.
    pub fn new(n: usize) -> Self {
        AccTable {
            slots: vec![0; 16],
            mask: 15,
            keys: Vec::new(),
            accs: Vec::new(),
            n,
        }
    }

    /// A table sized for `keys` entries without growing (a neighbouring pane's size is a good guess).
    pub fn with_capacity(n: usize, keys: usize) -> Self {
        let slots = (keys * 2).next_power_of_two().max(16);
        AccTable {
            slots: vec![0; slots],
            mask: slots - 1,
            keys: Vec::with_capacity(keys),
            accs: Vec::with_capacity(keys * n),
            n,
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Empties the table, keeping its memory.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = 0);
        self.keys.clear();
        self.accs.clear();
    }

    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        // Low bits index the table; the key-group mapping uses the high bits, so they stay uniform.
        hash as usize & self.mask
    }

    /// First step of a prefetched lookup: the slot line.
    #[inline(always)]
    pub fn prefetch_slot(&self, hash: u64) {
        prefetch(self.slots.as_ptr().wrapping_add(self.home(hash)));
    }

    /// Second step (the slot line should be cached by now): the key and accumulator lines.
    #[inline(always)]
    pub fn prefetch_entry(&self, hash: u64) {
        let s = self.slots[self.home(hash)];
        if s != 0 && s >> 32 == tag(hash) {
            let e = (s & 0xffff_ffff) as usize - 1;
            prefetch(self.keys.as_ptr().wrapping_add(e));
            let a = self.accs.as_ptr().wrapping_add(e * self.n);
            prefetch(a);
            prefetch((a as *const u8).wrapping_add(64));
        }
    }

    /// The entry of the zero-padded key `key[..len]`, if present.
    #[inline]
    pub fn find(&self, hash: u64, key: &[u8; INLINE_KEY_BYTES], len: u8) -> Option<usize> {
        let t = tag(hash);
        let mut i = self.home(hash);
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if s >> 32 == t {
                let e = (s & 0xffff_ffff) as usize - 1;
                let k = &self.keys[e];
                if k.hash == hash && k.len == len && keys_equal(&k.bytes, key, len as usize) {
                    return Some(e);
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The accumulators of the zero-padded key `key[..len]`, created (empty) on first sight.
    #[inline]
    pub fn upsert(
        &mut self,
        hash: u64,
        key: &[u8; INLINE_KEY_BYTES],
        len: u8,
        layout: &AggLayout,
    ) -> &mut [Acc] {
        let e = match self.find(hash, key, len) {
            Some(e) => e,
            None => self.insert(hash, key, len, layout),
        };
        &mut self.accs[e * self.n..e * self.n + self.n]
    }

    /// Adds the leading events of `evs` whose time is in `[start, end)` (one pane) and returns how
    /// many that was. The state of the events a few places ahead is prefetched in two steps (slot,
    /// then entry) so the cache misses of consecutive events overlap.
    #[inline]
    pub fn add_run(&mut self, evs: &[Event], start: i64, end: i64, layout: &AggLayout) -> usize {
        for e in evs.iter().take(SLOT_AHEAD) {
            self.prefetch_slot(e.hash);
        }
        for (j, e) in evs.iter().enumerate() {
            if e.ts < start || e.ts >= end {
                return j;
            }
            if let Some(a) = evs.get(j + SLOT_AHEAD) {
                self.prefetch_slot(a.hash);
            }
            if let Some(a) = evs.get(j + ENTRY_AHEAD) {
                self.prefetch_entry(a.hash);
            }
            let accs = self.upsert(e.hash, &e.key, e.key_len, layout);
            layout.update(accs, e);
        }
        evs.len()
    }

    #[cold]
    fn insert(
        &mut self,
        hash: u64,
        key: &[u8; INLINE_KEY_BYTES],
        len: u8,
        layout: &AggLayout,
    ) -> usize {
        if (self.keys.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let e = self.keys.len();
        let mut k = KeyEntry {
            hash,
            len,
            bytes: [0; INLINE_KEY_BYTES],
        };
        k.bytes[..len as usize].copy_from_slice(&key[..len as usize]);
        self.keys.push(k);
        layout.alloc(&mut self.accs);
        self.place(hash, e);
        e
    }

    fn place(&mut self, hash: u64, e: usize) {
        let mut i = self.home(hash);
        while self.slots[i] != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = tag(hash) << 32 | (e as u64 + 1);
    }

    fn grow(&mut self) {
        let cap = self.slots.len() * 2;
        self.slots.clear();
        self.slots.resize(cap, 0);
        self.mask = cap - 1;
        for e in 0..self.keys.len() {
            self.place(self.keys[e].hash, e);
        }
    }

    /// Accumulators of entry `e`.
    #[inline]
    pub fn accs(&self, e: usize) -> &[Acc] {
        &self.accs[e * self.n..e * self.n + self.n]
    }

    /// Entries in insertion order: (key entry, accumulators).
    pub fn iter(&self) -> impl Iterator<Item = (&KeyEntry, &[Acc])> + '_ {
        self.keys
            .iter()
            .enumerate()
            .map(move |(e, k)| (k, self.accs(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{hash_key, Event, Value};
    use crate::plan::{AggFunc, AggPlan};

    fn layout() -> AggLayout {
        AggLayout::new(
            &[AggPlan {
                name: "s".into(),
                func: AggFunc::Sum,
                field: Some("v".into()),
            }],
            &[Some(0)],
        )
    }

    #[test]
    fn behaves_like_a_map_through_growth_and_collisions() {
        let l = layout();
        let mut t = AccTable::new(1);
        let mut model = std::collections::HashMap::new();
        for i in 0..5000u64 {
            let k = i % 1700;
            let key = format!("k{k}");
            // Every third key shares its low bits with others: same home slot, different keys.
            let full = hash_key(key.as_bytes());
            let hash = if k % 3 == 0 { full & !0xfff } else { full };
            let mut ev = Event::EMPTY;
            ev.set_value(0, Value::Int(i as i64));
            let mut padded = [0u8; INLINE_KEY_BYTES];
            padded[..key.len()].copy_from_slice(key.as_bytes());
            l.update(t.upsert(hash, &padded, key.len() as u8, &l), &ev);
            model.entry(key).or_insert((hash, 0i64)).1 += i as i64;
        }
        assert_eq!(t.len(), 1700);
        for (key, (hash, sum)) in &model {
            let mut padded = [0u8; INLINE_KEY_BYTES];
            padded[..key.len()].copy_from_slice(key.as_bytes());
            let e = t.find(*hash, &padded, key.len() as u8).expect("present");
            let mut out = Vec::new();
            l.write_fields(t.accs(e), &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), format!(",\"s\":{sum}"));
        }
        let mut k1 = [0u8; INLINE_KEY_BYTES];
        k1[..2].copy_from_slice(b"k1");
        assert_eq!(t.find(1, &k1, 2), None);
        t.clear();
        assert!(t.is_empty() && t.find(model["k1"].0, &k1, 2).is_none());
    }
}
