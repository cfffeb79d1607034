//! Rows an operator holds by value, and the slots that name them. Shared by the join operators and
//! dedupe (their keys: `keys`).
//!
//! [`RowStore`] keeps row bytes in 64 KiB pages: a row is appended to the current page, so holding
//! one costs no allocation once the pages exist; each page counts its live rows and is reused when
//! the last one is dropped. Rows leave in roughly event-time order, so pages empty and refill; a
//! row that outlives its neighbours keeps one page alive, so memory is the live rows plus at most
//! one page per long-lived row. A row larger than a page gets a page of its own.

use crate::checkpoint::codec::{Dec, Enc};
use crate::state::prefetch::prefetch;

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

/// How far ahead of a list of due timers an operator prefetches their rows and keys, and (half as
/// far) the table lines of keys it may forget.
pub const PREFETCH_AHEAD: usize = 16;

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

    /// Hints that `slot` is read soon.
    #[inline(always)]
    pub fn prefetch(&self, slot: u32) {
        prefetch(self.items.as_ptr().wrapping_add(slot as usize));
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

/// A join's output row for key bytes `key`: `{"<on fields>", "left": .., "right": ..}`, an
/// absent side `null`.
pub fn write_pair(
    line: &mut Vec<u8>,
    on: &[String],
    key: &[u8],
    left: Option<&[u8]>,
    right: Option<&[u8]>,
) {
    line.clear();
    line.push(b'{');
    write_key_fields(on, key, line);
    for (name, rec) in [("left", left), ("right", right)] {
        line.push(b',');
        crate::expr::write_json_string(name, line);
        line.push(b':');
        match rec {
            Some(r) => line.extend_from_slice(trim(r)),
            None => line.extend_from_slice(b"null"),
        }
    }
    line.extend_from_slice(b"}\n");
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
}
