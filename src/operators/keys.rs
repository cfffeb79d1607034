//! Keys interned to small dense indices without allocating per lookup, each with the operator's
//! per-key state beside its bytes: the key index of the join operators and dedupe.

use super::rows::{RowId, RowStore};
use crate::state::index_table::IndexTable;
use crate::state::prefetch::prefetch;

/// Key bytes this short or shorter are kept in the key's slot, not in a page: one cache line
/// less to read per lookup, which is most of what interning costs once the keys outgrow the cache.
/// 11 makes `Stored` 16 bytes, as large as a paged key's `RowId` and its tag, and fits the
/// usual ids (`"ad-123"`, a 10-digit number).
const INLINE: usize = 11;

/// A key's bytes: inline when short, else a row in [`Keys`]' pages.
#[derive(Debug, Clone, Copy)]
enum Stored {
    Free,
    Inline(u8, [u8; INLINE]),
    Paged(RowId),
}

/// A key slot: its hash, bytes and the operator's state for the key, read together in one
/// cache line (or two).
#[derive(Debug, Clone, Copy)]
struct Slot<V> {
    hash: u64,
    bytes: Stored,
    value: V,
}

/// Keys by (hash, bytes) -> dense index and a value `V` per key (the operator's per-key state,
/// kept in the key's slot), so timers can name a key by a small number. Short key bytes live in
/// the slot, longer ones in a [`RowStore`], and the index in an [`IndexTable`] (one word per
/// entry, so a lookup is one table line and one slot, both prefetchable: [`Keys::prefetch`],
/// [`Keys::prefetch_slot`]); interning a new key or forgetting one allocates nothing once the
/// pages exist. A removed key's index is reused, so the index stays as small as the
/// number of keys held, not the number ever seen. Keys may be of any length.
pub struct Keys<V = ()> {
    /// Hash -> index, one word per entry, prefetchable.
    table: IndexTable,
    /// Slots by index; `Stored::Free` for a free index.
    list: Vec<Slot<V>>,
    free: Vec<u32>,
    bytes: RowStore,
}

impl<V> Default for Keys<V> {
    fn default() -> Self {
        Keys {
            table: IndexTable::default(),
            list: Vec::new(),
            free: Vec::new(),
            bytes: RowStore::default(),
        }
    }
}

impl<V: Copy + Default> Keys<V> {
    fn bytes_of<'a>(list: &'a [Slot<V>], pages: &'a RowStore, i: u32) -> Option<(u64, &'a [u8])> {
        let s = list.get(i as usize)?;
        match &s.bytes {
            Stored::Free => None,
            Stored::Inline(n, b) => Some((s.hash, &b[..usize::from(*n)])),
            Stored::Paged(r) => Some((s.hash, pages.get(*r))),
        }
    }

    /// The index of a key, if it is held.
    pub fn find(&self, hash: u64, key: &[u8]) -> Option<u32> {
        let (list, pages) = (&self.list, &self.bytes);
        let same =
            |i| Keys::bytes_of(list, pages, i).is_some_and(|(full, b)| full == hash && b == key);
        self.table.find(hash, same)
    }

    /// The index of a key, added if new (with `V::default()`); true when new.
    pub fn intern(&mut self, hash: u64, key: &[u8]) -> (u32, bool) {
        if let Some(i) = self.find(hash, key) {
            return (i, false);
        }
        let bytes = if key.len() <= INLINE {
            let mut b = [0u8; INLINE];
            b[..key.len()].copy_from_slice(key);
            Stored::Inline(key.len() as u8, b)
        } else {
            Stored::Paged(self.bytes.put(key))
        };
        let slot = Slot {
            hash,
            bytes,
            value: V::default(),
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.list[i as usize] = slot;
                i
            }
            None => {
                self.list.push(slot);
                (self.list.len() - 1) as u32
            }
        };
        self.table.insert(hash, i);
        (i, true)
    }

    /// Hints that `intern(hash, ..)` comes soon: at stage 0 its table line, at stage 1 (the table
    /// line cached by then) the slot of the first key it names with that hash.
    #[inline(always)]
    pub fn prefetch(&self, hash: u64, stage: u8) {
        if stage == 0 {
            self.table.prefetch(hash);
        } else if let Some(i) = self.table.candidate(hash) {
            self.prefetch_slot(i);
        }
    }

    /// Hints that key `i`'s slot (its hash, bytes and value) is read soon.
    #[inline(always)]
    pub fn prefetch_slot(&self, i: u32) {
        prefetch(self.list.as_ptr().wrapping_add(i as usize));
    }

    /// Hints that key `i` is removed soon: its table line (its slot should be cached by now, for
    /// the hash).
    #[inline(always)]
    pub fn prefetch_removal(&self, i: u32) {
        if let Some(s) = self.list.get(i as usize) {
            self.table.prefetch(s.hash);
        }
    }

    /// The (hash, bytes) of key `i`.
    pub fn get(&self, i: u32) -> Option<(u64, &[u8])> {
        Keys::bytes_of(&self.list, &self.bytes, i)
    }

    /// The state of key `i` (a free index's is the default, and unused).
    pub fn value(&self, i: u32) -> V {
        self.list
            .get(i as usize)
            .map_or_else(V::default, |s| s.value)
    }

    /// The state of key `i`, to change. Panics on an index [`Keys::intern`] never gave.
    pub fn value_mut(&mut self, i: u32) -> &mut V {
        &mut self.list[i as usize].value
    }

    /// Forgets key `i`; its index will be given to a new key.
    pub fn remove(&mut self, i: u32) {
        let Some(slot) = self.list.get_mut(i as usize) else {
            return;
        };
        let (hash, bytes) = (slot.hash, std::mem::replace(&mut slot.bytes, Stored::Free));
        match bytes {
            Stored::Free => return,
            Stored::Paged(r) => self.bytes.drop_row(r),
            Stored::Inline(..) => {}
        }
        self.table.remove(hash, i);
        self.free.push(i);
    }

    /// Approximate bytes the index holds: the key bytes' pages, the slots and the table.
    pub fn bytes(&self) -> u64 {
        let slots = self.list.len() * std::mem::size_of::<Slot<V>>();
        self.bytes.bytes().1 + slots as u64 + self.table.bytes()
    }

    /// Indices given so far: every held key's index is below it.
    pub fn slots(&self) -> u32 {
        self.list.len() as u32
    }

    /// Keys held now.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_every_length_intern_to_one_index_and_are_forgotten() {
        let mut keys: Keys = Keys::default();
        // Lengths around the inline limit, and two keys with one hash (a collision).
        let all: Vec<Vec<u8>> = (0..60u8).map(|n| (0..n).map(|j| j ^ n).collect()).collect();
        let mut idx = Vec::new();
        for k in &all {
            let (i, new) = keys.intern(7, k);
            assert!(new);
            idx.push(i);
        }
        for (k, &i) in all.iter().zip(&idx) {
            assert_eq!(keys.intern(7, k), (i, false));
            assert_eq!(keys.get(i), Some((7, &k[..])));
        }
        assert_eq!(std::mem::size_of::<Slot<()>>(), 24);
        assert_eq!(std::mem::size_of::<Slot<(i64, u32)>>(), 40);
        for &i in &idx[..30] {
            keys.remove(i);
            keys.remove(i);
        }
        assert_eq!(keys.len(), 30);
        assert_eq!(keys.get(idx[0]), None);
        let (i, new) = keys.intern(7, &all[0]);
        assert!(new && idx[..30].contains(&i), "a freed index is reused");
        assert_eq!(keys.intern(7, &all[40]), (idx[40], false));
    }
}
