//! Rows an operator holds by value, and keys interned without allocating per lookup. Shared by the
//! join operators and dedupe.
//!
//! [`RowStore`] keeps row bytes in 64 KiB pages: a row is appended to the current page, so holding
//! one costs no allocation once the pages exist; each page counts its live rows and is reused when
//! the last one is dropped. Rows leave in roughly event-time order, so pages empty and refill; a
//! row that outlives its neighbours keeps one page alive, so memory is the live rows plus at most
//! one page per long-lived row. A row larger than a page gets a page of its own.

use crate::checkpoint::codec::{Dec, Enc};

/// Bytes per page of a [`RowStore`].
const PAGE: usize = 64 * 1024;

/// Where a held row's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Default)]
pub struct RowStore {
    pages: Vec<Page>,
    /// Pages with no live row, ready for reuse.
    free: Vec<u32>,
    /// The page rows are appended to.
    current: Option<u32>,
    /// Bytes of rows held now.
    held: u64,
}

impl RowStore {
    /// Keeps a copy of `row`.
    pub fn put(&mut self, row: &[u8]) -> RowId {
        let page = match self.current {
            Some(p) if self.pages[p as usize].bytes.len() + row.len() <= PAGE.max(row.len()) => p,
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
                    bytes: Vec::with_capacity(PAGE.max(need)),
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

/// Keys by (hash, bytes) -> dense index, so per-key state lives in a `Vec` and timers can name a
/// key by a small number. The key bytes live in a [`RowStore`] and the index in a table of
/// indices, so interning a new key or forgetting one allocates nothing once the pages exist. A
/// removed key's index is reused, so the index stays as small as the number of keys held, not
/// the number ever seen. Keys may be of any length.
#[derive(Default)]
pub struct Keys {
    table: hashbrown::HashTable<u32>,
    /// (hash, bytes) by index; `None` for a free index.
    list: Vec<Option<(u64, RowId)>>,
    free: Vec<u32>,
    bytes: RowStore,
}

impl Keys {
    /// The index of a key, added if new; true when new.
    pub fn intern(&mut self, hash: u64, key: &[u8]) -> (u32, bool) {
        let (list, bytes) = (&self.list, &self.bytes);
        let same =
            |&i: &u32| list[i as usize].is_some_and(|(h, r)| h == hash && bytes.get(r) == key);
        if let Some(&i) = self.table.find(hash, same) {
            return (i, false);
        }
        let entry = Some((hash, self.bytes.put(key)));
        let i = match self.free.pop() {
            Some(i) => {
                self.list[i as usize] = entry;
                i
            }
            None => {
                self.list.push(entry);
                (self.list.len() - 1) as u32
            }
        };
        let list = &self.list;
        self.table
            .insert_unique(hash, i, |&j| list[j as usize].map_or(0, |(h, _)| h));
        (i, true)
    }

    /// The (hash, bytes) of key `i`.
    pub fn get(&self, i: u32) -> Option<(u64, &[u8])> {
        let (h, r) = (*self.list.get(i as usize)?)?;
        Some((h, self.bytes.get(r)))
    }

    /// Forgets key `i`; its index will be given to a new key.
    pub fn remove(&mut self, i: u32) {
        let Some((hash, row)) = self.list.get_mut(i as usize).and_then(Option::take) else {
            return;
        };
        if let Ok(e) = self.table.find_entry(hash, |&j| j == i) {
            e.remove();
        }
        self.bytes.drop_row(row);
        self.free.push(i);
    }

    /// Approximate bytes the index holds: the key bytes' pages, the slots and the table.
    pub fn bytes(&self) -> u64 {
        self.bytes.bytes().1 + (self.list.len() * 24 + self.table.capacity() * 5) as u64
    }

    /// Keys held now.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
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
}
