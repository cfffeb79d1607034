//! Rows an operator holds by value, and keys interned without allocating per lookup. Shared by the
//! join operators and dedupe.
//!
//! [`RowStore`] keeps row bytes in 64 KiB pages: a row is appended to the current page, so holding
//! one costs no allocation once the pages exist; each page counts its live rows and is reused when
//! the last one is dropped. Rows leave in roughly event-time order, so pages empty and refill; a
//! row that outlives its neighbours keeps one page alive, so memory is the live rows plus at most
//! one page per long-lived row. A row larger than a page gets a page of its own.

use crate::checkpoint::codec::{Dec, Enc};

/// Bytes per page of a [`RowStore`] by default.
const PAGE: usize = 64 * 1024;

/// Where a held row's bytes are (the default: an empty row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RowId {
    page: u32,
    at: u32,
    len: u32,
}

impl RowId {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[derive(Default)]
struct Page {
    bytes: Vec<u8>,
    live: u32,
}

/// Row bytes by value in reusable pages.
pub struct RowStore {
    /// Bytes per page.
    page: usize,
    pages: Vec<Page>,
    /// Pages with no live row, ready for reuse.
    free: Vec<u32>,
    /// The page rows are appended to.
    current: Option<u32>,
    /// Bytes of rows held now.
    held: u64,
}

impl Default for RowStore {
    fn default() -> Self {
        RowStore::with_page_size(PAGE)
    }
}

impl RowStore {
    /// A store of `page`-byte pages: small pages for rows that live long among short-lived ones
    /// (each such row keeps its page alive), large ones for rows that leave in arrival order.
    pub fn with_page_size(page: usize) -> Self {
        RowStore {
            page: page.max(1),
            pages: Vec::new(),
            free: Vec::new(),
            current: None,
            held: 0,
        }
    }

    /// Keeps a copy of `row`.
    pub fn put(&mut self, row: &[u8]) -> RowId {
        let page = match self.current {
            Some(p)
                if self.pages[p as usize].bytes.len() + row.len() <= self.page.max(row.len()) =>
            {
                p
            }
            _ => self.fresh_page(row.len()),
        };
        let pg = &mut self.pages[page as usize];
        let at = pg.bytes.len();
        pg.bytes.extend_from_slice(row);
        pg.live += 1;
        self.held += row.len() as u64;
        RowId {
            page,
            at: at as u32,
            len: row.len() as u32,
        }
    }

    fn fresh_page(&mut self, need: usize) -> u32 {
        let p = match self.free.pop() {
            Some(p) => p,
            None => {
                self.pages.push(Page {
                    bytes: Vec::with_capacity(self.page.max(need)),
                    live: 0,
                });
                (self.pages.len() - 1) as u32
            }
        };
        let pg = &mut self.pages[p as usize];
        pg.bytes.clear();
        pg.bytes.reserve(need);
        self.current = Some(p);
        p
    }

    /// The bytes of a held row.
    pub fn get(&self, id: RowId) -> &[u8] {
        self.pages
            .get(id.page as usize)
            .and_then(|p| p.bytes.get(id.at as usize..(id.at + id.len) as usize))
            .unwrap_or(&[])
    }

    /// Lets a row go; its page is reused once it holds no live row.
    pub fn drop_row(&mut self, id: RowId) {
        let Some(pg) = self.pages.get_mut(id.page as usize) else {
            return;
        };
        pg.live = pg.live.saturating_sub(1);
        self.held = self.held.saturating_sub(u64::from(id.len));
        if pg.live == 0 {
            if self.current == Some(id.page) {
                pg.bytes.clear();
            } else {
                self.free.push(id.page);
            }
        }
    }

    /// Bytes of rows held now, and of pages allocated.
    pub fn bytes(&self) -> (u64, u64) {
        let pages: usize = self.pages.iter().map(|p| p.bytes.capacity()).sum();
        (self.held, pages as u64)
    }
}

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
/// the slot, longer ones in a [`RowStore`], and
/// the index in a table of indices, so interning a new key or forgetting one allocates nothing
/// once the pages exist. A removed key's index is reused, so the index stays as small as the
/// number of keys held, not the number ever seen. Keys may be of any length.
pub struct Keys<V = ()> {
    /// (the hash's high half, index): with the hash beside the index, growing the table reads
    /// no slot (a slot per entry would be a cache miss each once the keys outgrow the cache), and
    /// a probe that meets another key's entry rarely reads its slot.
    table: hashbrown::HashTable<(u32, u32)>,
    /// Slots by index; `Stored::Free` for a free index.
    list: Vec<Slot<V>>,
    free: Vec<u32>,
    bytes: RowStore,
}

impl<V> Default for Keys<V> {
    fn default() -> Self {
        Keys {
            table: hashbrown::HashTable::new(),
            list: Vec::new(),
            free: Vec::new(),
            bytes: RowStore::default(),
        }
    }
}

/// The table's hash of a key hash: its high half, twice, so it can be rebuilt from an entry.
/// hashbrown places by the low bits and tags by the top seven, both from the high half here.
fn table_hash(high: u32) -> u64 {
    (u64::from(high) << 32) | u64::from(high)
}

fn high(hash: u64) -> u32 {
    (hash >> 32) as u32
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

    /// The index of a key, added if new (with `V::default()`); true when new.
    pub fn intern(&mut self, hash: u64, key: &[u8]) -> (u32, bool) {
        let (list, pages) = (&self.list, &self.bytes);
        let same = |&(h, i): &(u32, u32)| {
            h == high(hash)
                && Keys::bytes_of(list, pages, i).is_some_and(|(full, b)| full == hash && b == key)
        };
        if let Some(&(_, i)) = self.table.find(table_hash(high(hash)), same) {
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
        self.table
            .insert_unique(table_hash(high(hash)), (high(hash), i), |&(h, _)| {
                table_hash(h)
            });
        (i, true)
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
        if let Ok(e) = self
            .table
            .find_entry(table_hash(high(hash)), |&(_, j)| j == i)
        {
            e.remove();
        }
        self.free.push(i);
    }

    /// Approximate bytes the index holds: the key bytes' pages, the slots and the table.
    pub fn bytes(&self) -> u64 {
        let slots = self.list.len() * std::mem::size_of::<Slot<V>>();
        self.bytes.bytes().1 + (slots + self.table.capacity() * 9) as u64
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

/// Values by slot number, a freed slot reused first: what an operator holds per row (its place
/// in a [`RowStore`], its links), named by timers by slot. One flat table, so holding a row
/// allocates nothing once the table has grown to the peak.
pub struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T: Copy> Slab<T> {
    pub fn insert(&mut self, item: T) -> u32 {
        match self.free.pop() {
            Some(s) => {
                self.items[s as usize] = item;
                s
            }
            None => {
                self.items.push(item);
                (self.items.len() - 1) as u32
            }
        }
    }

    /// Frees `slot` (its value stays readable until the slot is given again).
    pub fn remove(&mut self, slot: u32) -> T {
        self.free.push(slot);
        self.items[slot as usize]
    }

    pub fn get(&self, slot: u32) -> Option<&T> {
        self.items.get(slot as usize)
    }

    /// Panics on a slot [`Slab::insert`] never gave: slots come only from it.
    pub fn at(&mut self, slot: u32) -> &mut T {
        &mut self.items[slot as usize]
    }

    /// Slots in use.
    pub fn len(&self) -> usize {
        self.items.len() - self.free.len()
    }

    /// Bytes allocated (the table never shrinks: its high-water mark).
    pub fn bytes(&self) -> u64 {
        (self.items.capacity() * std::mem::size_of::<T>() + self.free.capacity() * 4) as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `b` without leading and trailing ASCII whitespace.
pub fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end]
}

/// Appends a held row (time and bytes) to checkpoint state.
pub fn put(e: &mut Enc, t: i64, row: &[u8]) {
    e.i64(t);
    e.bytes(row);
}

/// Reads a row written by [`put`].
pub fn get<'a>(d: &mut Dec<'a>) -> Result<(i64, &'a [u8]), String> {
    let t = d.i64("row time")?;
    Ok((t, d.bytes("row")?))
}

/// Writes `{"name":token,...}` for key fields `names` and a key's tokens (0-separated), as the
/// start of an output record (no closing brace). A missing token writes `null`.
pub fn write_key_fields(names: &[String], key: &[u8], line: &mut Vec<u8>) {
    let mut tokens = key.split(|&b| b == 0);
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        crate::expr::write_json_string(name, line);
        line.push(b':');
        match tokens.next() {
            Some(t) if !t.is_empty() => line.extend_from_slice(t),
            _ => line.extend_from_slice(b"null"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_back_as_put_and_pages_are_reused() {
        let mut s = RowStore::default();
        let mut ids = Vec::new();
        for i in 0..5000u32 {
            let row: Vec<u8> = (0..(i % 97 + 1)).map(|j| (i + j) as u8).collect();
            ids.push((s.put(&row), row));
        }
        for (id, row) in &ids {
            assert_eq!(s.get(*id), &row[..]);
        }
        let pages_before = s.pages.len();
        for (id, _) in ids.drain(..) {
            s.drop_row(id);
        }
        assert_eq!(s.bytes().0, 0);
        for i in 0..5000u32 {
            let row = vec![i as u8; (i % 97 + 1) as usize];
            let id = s.put(&row);
            assert_eq!(s.get(id), &row[..]);
        }
        assert!(s.pages.len() <= pages_before + 1, "pages reused");
        let big = vec![7u8; 3 * PAGE];
        let id = s.put(&big);
        assert_eq!(s.get(id), &big[..], "a row larger than a page");
    }

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
