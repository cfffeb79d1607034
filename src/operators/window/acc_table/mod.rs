//! A hash table from group-by key to accumulator set, built so one key's whole state is one or two
//! cache lines and lookups can be prefetched.
//!
//! Aggregation over ~100k keys is bound by cache misses, not instructions. hashbrown cannot say
//! where a key's bucket is before the lookup, so it cannot be prefetched, and a key with its
//! accumulators in separate arrays costs a miss for each; this table keeps the key and its
//! accumulators in one row and can be prefetched ([`AccTable::prefetch_slot`],
//! [`AccTable::prefetch_entry`]), which lets a run overlap the misses of later events with the work
//! on the current one.
//!
//! Layout: open addressing with linear probing over `slots` (power-of-two length, load <= 1/2).
//! A slot is `0` (empty) or `tag << 32 | (row + 1)` where `tag` is the hash's high 32 bits. Rows
//! are dense, in insertion order, in 64-byte aligned lines: `[hash][key words][accumulator words]`,
//! where the key words hold the key bytes zero-padded with the key's length in the top byte of the
//! last word, and the accumulator words are laid out by an [`AggLayout`] (all zeros = empty). The
//! number of key words grows (every row re-laid out) when a longer key arrives, so short keys never
//! pay for the longest possible one; a row's width is rounded so it never straddles more lines than
//! it must (a count and a sum over keys of up to 15 bytes: exactly one line). Rows are never
//! removed one by one; a pane's table is cleared whole when the watermark retires it, keeping its
//! capacity for the next pane. A key longer than an event carries inline ([`INLINE_KEY_BYTES`]) is
//! kept beside the rows (`long`) and its row holds its index there, marked by the length byte
//! [`LONG`]: such keys are slower, never refused.

use super::aggregate::{AggLayout, Sketches};
use crate::checkpoint::codec::{Dec, Enc};
use crate::record::event::{Event, Rec, INLINE_KEY_BYTES};
use crate::state::prefetch::prefetch;

/// The length byte of a row whose key is in `AccTable::long` (its first key word is the index).
const LONG: u8 = 255;

/// Prefetch distances of [`AccTable::add_run`], in events: the slot first, the row once the slot
/// is (likely) cached.
const SLOT_AHEAD: usize = 16;
const ENTRY_AHEAD: usize = 8;

/// Key bytes a new table's rows hold before any longer key widens them: 15 bytes plus the length
/// byte is two words, which with a count and a sum makes a row exactly one line.
pub const INITIAL_KEY_BYTES: usize = 15;

/// One cache line of row words.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u64; 8]);

const EMPTY_LINE: Line = Line([0; 8]);

/// The lines as one slice of words.
#[inline(always)]
fn flat(lines: &[Line]) -> &[u64] {
    // SAFETY: `Line` is `repr(C)` over `[u64; 8]` (no padding, alignment 64 >= 8), so `n` lines are
    // exactly `8 n` initialised, aligned `u64`s, borrowed for as long as `lines` is.
    unsafe { std::slice::from_raw_parts(lines.as_ptr().cast::<u64>(), lines.len() * 8) }
}

#[inline(always)]
fn flat_mut(lines: &mut [Line]) -> &mut [u64] {
    // SAFETY: as in `flat`; the unique borrow of `lines` makes the slice unique.
    unsafe { std::slice::from_raw_parts_mut(lines.as_mut_ptr().cast::<u64>(), lines.len() * 8) }
}

/// Key words for a key of `len` bytes: its bytes and one length byte.
#[inline]
fn key_words_for(len: usize) -> usize {
    (len + 1).div_ceil(8)
}

/// Word `i` of a zero-padded inline key (little-endian; zero past the array).
#[inline(always)]
fn key_word(key: &[u8; INLINE_KEY_BYTES], i: usize) -> u64 {
    let s = 8 * i;
    if s + 8 <= INLINE_KEY_BYTES {
        let mut b = [0u8; 8];
        b.copy_from_slice(&key[s..s + 8]);
        u64::from_le_bytes(b)
    } else {
        let mut b = [0u8; 8];
        if s < INLINE_KEY_BYTES {
            b[..INLINE_KEY_BYTES - s].copy_from_slice(&key[s..]);
        }
        u64::from_le_bytes(b)
    }
}

/// Words per row for `n` words of content: a power of two up to a line, whole lines beyond, so a
/// row starts at a line boundary or shares its line only with rows as small as itself.
fn stride_for(n: usize) -> usize {
    if n <= 8 {
        n.next_power_of_two()
    } else {
        n.div_ceil(8) * 8
    }
}

/// One row as [`AccTable::rows`] yields it.
pub struct Row<'a> {
    pub hash: u64,
    /// The key zero-padded, when it is inline (`len` bytes).
    pub inline: [u8; INLINE_KEY_BYTES],
    pub len: u8,
    /// The key, when it is longer than an inline one.
    pub long: Option<&'a [u8]>,
    pub accs: &'a [u64],
}

impl<'a> Row<'a> {
    pub fn key(&self) -> &[u8] {
        match self.long {
            Some(k) => k,
            None => &self.inline[..(self.len as usize).min(INLINE_KEY_BYTES)],
        }
    }
}

/// `key` zero-padded into an inline key, if it fits.
#[inline]
pub fn inline_key(key: &[u8]) -> Option<[u8; INLINE_KEY_BYTES]> {
    if key.len() > INLINE_KEY_BYTES {
        return None;
    }
    let mut k = [0u8; INLINE_KEY_BYTES];
    k[..key.len()].copy_from_slice(key);
    Some(k)
}

pub struct AccTable {
    slots: Vec<u64>,
    mask: usize,
    lines: Vec<Line>,
    /// Rows in use.
    len: usize,
    /// Key words per row.
    kw: usize,
    /// Accumulator words per row.
    aw: usize,
    /// Words per row (`1 + kw + aw`, rounded by `stride_for`).
    stride: usize,
    sketches: Sketches,
    /// Keys longer than [`INLINE_KEY_BYTES`], by the index their row holds.
    long: Vec<Box<[u8]>>,
}

#[inline(always)]
fn tag(hash: u64) -> u64 {
    hash >> 32
}

impl AccTable {
    /// A table for accumulator sets of `layout`, sized for `keys` rows without growing (a
    /// neighbouring pane's size is a good guess) and keys of up to `key_bytes` bytes.
    pub fn with_capacity(layout: &AggLayout, keys: usize, key_bytes: usize) -> Self {
        let slots = (keys * 2).next_power_of_two().max(16);
        let kw = key_words_for(key_bytes.min(INLINE_KEY_BYTES));
        let aw = layout.words();
        let stride = stride_for(1 + kw + aw);
        AccTable {
            slots: vec![0; slots],
            mask: slots - 1,
            lines: vec![EMPTY_LINE; (keys * stride).div_ceil(8)],
            len: 0,
            kw,
            aw,
            stride,
            sketches: Sketches::default(),
            long: Vec::new(),
        }
    }

    pub fn new(layout: &AggLayout) -> Self {
        AccTable::with_capacity(layout, 0, INITIAL_KEY_BYTES)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Bytes the table has allocated for its index, rows and distinct counters.
    pub fn bytes(&self) -> usize {
        self.slots.capacity() * 8
            + self.lines.capacity() * std::mem::size_of::<Line>()
            + self.sketches.bytes()
    }

    /// The longest key the rows hold without re-laying out.
    pub fn key_bytes(&self) -> usize {
        self.kw * 8 - 1
    }

    pub fn sketches(&self) -> &Sketches {
        &self.sketches
    }

    /// The distinct counters, to take a value out (a group aggregate's retraction).
    pub fn sketches_mut(&mut self) -> &mut Sketches {
        &mut self.sketches
    }

    /// Empties the table, keeping its memory.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = 0);
        let used = (self.len * self.stride).div_ceil(8).min(self.lines.len());
        self.lines[..used].fill(EMPTY_LINE);
        self.len = 0;
        self.sketches.clear();
        self.long.clear();
    }

    #[inline(always)]
    fn words(&self) -> &[u64] {
        flat(&self.lines)
    }

    #[inline(always)]
    fn words_mut(&mut self) -> &mut [u64] {
        flat_mut(&mut self.lines)
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

    /// Second step (the slot line should be cached by now): the row's lines.
    #[inline(always)]
    pub fn prefetch_entry(&self, hash: u64) {
        let s = self.slots[self.home(hash)];
        if s != 0 && s >> 32 == tag(hash) {
            let at = ((s & 0xffff_ffff) as usize - 1) * self.stride;
            let p = self.lines.as_ptr().cast::<u64>().wrapping_add(at);
            prefetch(p);
            if self.stride > 8 {
                prefetch(p.wrapping_add(8));
            }
        }
    }

    /// True when row `r` holds the zero-padded key `key[..len]` with hash `hash`.
    #[inline(always)]
    fn row_is(&self, r: usize, hash: u64, key: &[u8; INLINE_KEY_BYTES], len: u8) -> bool {
        let kw = self.kw;
        let w = &self.words()[r * self.stride..r * self.stride + 1 + kw];
        if w[0] != hash {
            return false;
        }
        for i in 0..kw {
            let mut k = key_word(key, i);
            if i == kw - 1 {
                k |= u64::from(len) << 56;
            }
            if w[1 + i] != k {
                return false;
            }
        }
        true
    }

    /// The row of the zero-padded key `key[..len]`, if present.
    #[inline]
    pub fn find(&self, hash: u64, key: &[u8; INLINE_KEY_BYTES], len: u8) -> Option<usize> {
        if len as usize > self.key_bytes() {
            return None; // longer than every key the rows hold
        }
        let t = tag(hash);
        let mut i = self.home(hash);
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if s >> 32 == t {
                let r = (s & 0xffff_ffff) as usize - 1;
                if self.row_is(r, hash, key, len) {
                    return Some(r);
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The row of the zero-padded key `key[..len]`, created (empty accumulators) on first sight.
    #[inline]
    pub fn upsert(&mut self, hash: u64, key: &[u8; INLINE_KEY_BYTES], len: u8) -> usize {
        match self.find(hash, key, len) {
            Some(r) => r,
            None => self.insert(hash, key, len),
        }
    }

    /// The row of `key` (any length), if present.
    pub fn find_key(&self, hash: u64, key: &[u8]) -> Option<usize> {
        match inline_key(key) {
            Some(k) => self.find(hash, &k, key.len() as u8),
            None => self.find_long(hash, key),
        }
    }

    /// The row of `key` (any length), created (empty accumulators) on first sight.
    pub fn upsert_key(&mut self, hash: u64, key: &[u8]) -> usize {
        match inline_key(key) {
            Some(k) => self.upsert(hash, &k, key.len() as u8),
            None => match self.find_long(hash, key) {
                Some(r) => r,
                None => self.insert_long(hash, key),
            },
        }
    }

    fn long_of(&self, r: usize) -> Option<&[u8]> {
        let w = &self.words()[r * self.stride..];
        if (w[self.kw] >> 56) as u8 != LONG {
            return None;
        }
        let idx = (w[1] & ((1 << 56) - 1)) as usize;
        self.long.get(idx).map(|k| &k[..])
    }

    #[cold]
    fn find_long(&self, hash: u64, key: &[u8]) -> Option<usize> {
        let t = tag(hash);
        let mut i = self.home(hash);
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if s >> 32 == t {
                let r = (s & 0xffff_ffff) as usize - 1;
                if self.words()[r * self.stride] == hash && self.long_of(r) == Some(key) {
                    return Some(r);
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    #[cold]
    fn insert_long(&mut self, hash: u64, key: &[u8]) -> usize {
        let idx = self.long.len() as u64;
        self.long.push(Box::from(key));
        let mut word = [0u8; INLINE_KEY_BYTES];
        word[..8].copy_from_slice(&idx.to_le_bytes());
        // One key word holds the index; the length byte marks it.
        let r = self.insert(hash, &word, 7);
        let at = r * self.stride + self.kw;
        let w = self.words_mut();
        w[at] = (w[at] & !(0xff << 56)) | (u64::from(LONG) << 56);
        r
    }

    /// Adds one event read with its payload (a long key, wide values) to its key's accumulators.
    pub fn add_rec(&mut self, rec: &Rec<'_>, layout: &AggLayout) -> usize {
        let r = self.upsert_key(rec.ev.hash, rec.key());
        let at = r * self.stride + 1 + self.kw;
        let accs = &mut flat_mut(&mut self.lines)[at..at + self.aw];
        layout.update(accs, rec, &mut self.sketches);
        r
    }

    /// Accumulators of row `r`.
    #[inline]
    pub fn accs(&self, r: usize) -> &[u64] {
        let at = r * self.stride + 1 + self.kw;
        &self.words()[at..at + self.aw]
    }

    /// Accumulators of row `r`, to be set (a group aggregate's retractable MIN/MAX).
    #[inline]
    pub fn accs_mut(&mut self, r: usize) -> &mut [u64] {
        let at = r * self.stride + 1 + self.kw;
        let aw = self.aw;
        &mut self.words_mut()[at..at + aw]
    }

    /// Empties the accumulators of row `r` (a group whose rows were all taken back); the row
    /// keeps its key. A distinct count's sketch stays in the arena, unreferenced.
    pub fn clear_accs(&mut self, r: usize) {
        let at = r * self.stride + 1 + self.kw;
        let aw = self.aw;
        self.words_mut()[at..at + aw].fill(0);
    }

    /// Adds one event to its key's accumulators.
    #[inline(always)]
    pub fn add(&mut self, ev: &Event, layout: &AggLayout) {
        self.add_row(ev, layout);
    }

    /// Adds one event and returns its row (rows keep their index until the table is cleared).
    #[inline(always)]
    pub fn add_row(&mut self, ev: &Event, layout: &AggLayout) -> usize {
        let r = self.upsert(ev.hash, &ev.key, ev.key_len);
        let at = r * self.stride + 1 + self.kw;
        let accs = &mut flat_mut(&mut self.lines)[at..at + self.aw];
        layout.update(accs, ev, &mut self.sketches);
        r
    }

    /// Merges `accs` (with its sketches `from`) into the accumulators of `key`.
    pub fn merge_into(
        &mut self,
        hash: u64,
        key: &[u8],
        accs: &[u64],
        from: &Sketches,
        layout: &AggLayout,
    ) {
        let r = self.upsert_key(hash, key);
        let at = r * self.stride + 1 + self.kw;
        let into = &mut flat_mut(&mut self.lines)[at..at + self.aw];
        layout.merge(into, &mut self.sketches, accs, from);
    }

    /// Appends every row to a state snapshot. Without sketches the rows are plain words and go as
    /// one copy (tag 1: row count, key words, stride, then the rows as laid out here), so the pause
    /// at a barrier is a memcpy; with them, row by row (tag 0: count, then per row hash, key and
    /// accumulators with their sketches).
    pub fn encode(&self, layout: &AggLayout, e: &mut Enc) {
        // Long keys' rows hold an index into this table's side store: not portable as words.
        if !layout.has_sketches() && self.long.is_empty() {
            e.u8(1);
            e.u64(self.len as u64);
            e.u64(self.kw as u64);
            e.u64(self.stride as u64);
            e.words(&self.words()[..self.len * self.stride]);
            return;
        }
        e.u8(0);
        e.u64(self.len as u64);
        for row in self.rows() {
            e.u64(row.hash);
            e.bytes(row.key());
            layout.encode(row.accs, &self.sketches, e);
        }
    }

    /// Adds the rows of a snapshot written by `encode` whose hash `keep` selects (the others are
    /// read and passed over). A key already present is corrupt state: keys never span snapshots.
    pub fn decode(
        &mut self,
        layout: &AggLayout,
        d: &mut Dec,
        keep: &dyn Fn(u64) -> bool,
    ) -> Result<(), String> {
        if d.u8("row format")? == 1 {
            return self.decode_words(d, keep);
        }
        let rows = d.count(9, "rows")?;
        let mut accs = vec![0u64; self.aw];
        let mut scratch = Sketches::default();
        for _ in 0..rows {
            let hash = d.u64("row hash")?;
            let k = d.bytes("row key")?;
            if !keep(hash) {
                scratch.clear();
                layout.decode(d, &mut accs, &mut scratch)?;
                continue;
            }
            if self.find_key(hash, k).is_some() {
                return Err("a key appears twice".into());
            }
            let r = match inline_key(k) {
                Some(key) => self.insert(hash, &key, k.len() as u8),
                None => self.insert_long(hash, k),
            };
            let at = r * self.stride + 1 + self.kw;
            let into = &mut flat_mut(&mut self.lines)[at..at + self.aw];
            layout.decode(d, into, &mut self.sketches)?;
        }
        Ok(())
    }

    /// The plain-words form of `decode` (tag 1): rows as another table laid them out, with its
    /// key words and stride; each kept row is inserted here and its accumulators copied.
    fn decode_words(&mut self, d: &mut Dec, keep: &dyn Fn(u64) -> bool) -> Result<(), String> {
        let rows = d.u64("rows")?;
        let kw = d.u64("key words")? as usize;
        let stride = d.u64("row stride")? as usize;
        if kw == 0 || kw > key_words_for(INLINE_KEY_BYTES) || stride != stride_for(1 + kw + self.aw)
        {
            return Err(format!(
                "rows of {kw} key words and stride {stride} do not fit {} accumulator words",
                self.aw
            ));
        }
        let n = usize::try_from(rows)
            .ok()
            .and_then(|r| r.checked_mul(stride * 8))
            .ok_or("row count overflows")?;
        let raw = d.raw(n, "rows")?;
        let word = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&raw[i * 8..i * 8 + 8]);
            u64::from_le_bytes(b)
        };
        for r in 0..rows as usize {
            let w0 = r * stride;
            let hash = word(w0);
            if !keep(hash) {
                continue;
            }
            let len = (word(w0 + kw) >> 56) as usize;
            if len > INLINE_KEY_BYTES || key_words_for(len) > kw {
                return Err(format!("a row with a {len}-byte key in {kw} key words"));
            }
            let mut key = [0u8; INLINE_KEY_BYTES];
            for i in 0..kw {
                let b = word(w0 + 1 + i).to_le_bytes();
                let s = 8 * i;
                let m = INLINE_KEY_BYTES.saturating_sub(s).min(8);
                key[s..s + m].copy_from_slice(&b[..m]);
            }
            key[len..].fill(0); // the length byte is not key
            if self.find(hash, &key, len as u8).is_some() {
                return Err("a key appears twice".into());
            }
            let at_row = self.insert(hash, &key, len as u8);
            let at = at_row * self.stride + 1 + self.kw;
            for j in 0..self.aw {
                let v = word(w0 + 1 + kw + j);
                flat_mut(&mut self.lines)[at + j] = v;
            }
        }
        Ok(())
    }

    /// Adds the leading events of `evs` whose time is in `[start, end)` (one pane) and returns how
    /// many that was. The state of the events a few places ahead is prefetched in two steps (slot,
    /// then row) so the cache misses of consecutive events overlap.
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
            self.add(e, layout);
        }
        evs.len()
    }

    #[cold]
    fn insert(&mut self, hash: u64, key: &[u8; INLINE_KEY_BYTES], len: u8) -> usize {
        let len = len.min(INLINE_KEY_BYTES as u8);
        if key_words_for(len as usize) > self.kw {
            self.widen(key_words_for(len as usize));
        }
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow_slots();
        }
        if (self.len + 1) * self.stride > self.lines.len() * 8 {
            let lines = (self.lines.len() * 2).max(((self.len + 1) * self.stride).div_ceil(8));
            self.lines.resize(lines, EMPTY_LINE);
        }
        let r = self.len;
        self.len += 1;
        let (kw, at) = (self.kw, r * self.stride);
        let w = self.words_mut();
        w[at] = hash;
        for i in 0..kw {
            w[at + 1 + i] = key_word(key, i);
        }
        w[at + kw] |= u64::from(len) << 56;
        self.place(hash, r);
        r
    }

    fn place(&mut self, hash: u64, r: usize) {
        let mut i = self.home(hash);
        while self.slots[i] != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = tag(hash) << 32 | (r as u64 + 1);
    }

    fn grow_slots(&mut self) {
        let cap = self.slots.len() * 2;
        self.slots.clear();
        self.slots.resize(cap, 0);
        self.mask = cap - 1;
        for r in 0..self.len {
            let hash = self.words()[r * self.stride];
            self.place(hash, r);
        }
    }

    /// Re-lays out every row with `kw` key words (more than now). Row numbers, and so the slots,
    /// stay as they are.
    fn widen(&mut self, kw: usize) {
        let (old_kw, old_stride) = (self.kw, self.stride);
        let stride = stride_for(1 + kw + self.aw);
        let mut lines = vec![EMPTY_LINE; (self.lines.len() * 8 / old_stride * stride).div_ceil(8)];
        let new = flat_mut(&mut lines);
        let old = flat(&self.lines);
        for r in 0..self.len {
            let (o, n) = (r * old_stride, r * stride);
            new[n] = old[o];
            let len = old[o + old_kw] >> 56;
            new[n + 1..n + 1 + old_kw].copy_from_slice(&old[o + 1..o + 1 + old_kw]);
            new[n + old_kw] &= !(0xff << 56);
            new[n + kw] |= len << 56;
            new[n + 1 + kw..n + 1 + kw + self.aw]
                .copy_from_slice(&old[o + 1 + old_kw..o + 1 + old_kw + self.aw]);
        }
        self.lines = lines;
        self.kw = kw;
        self.stride = stride;
    }

    /// Rows in insertion order.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> + '_ {
        (0..self.len).map(move |r| {
            let w = &self.words()[r * self.stride..];
            let len = (w[self.kw] >> 56) as u8;
            let long = self.long_of(r);
            let mut key = [0u8; INLINE_KEY_BYTES];
            if long.is_none() {
                for i in 0..self.kw {
                    let b = w[1 + i].to_le_bytes();
                    let s = 8 * i;
                    let n = (INLINE_KEY_BYTES.saturating_sub(s)).min(8);
                    key[s..s + n].copy_from_slice(&b[..n]);
                }
                key[(len as usize).min(INLINE_KEY_BYTES)..].fill(0); // the length byte is not key
            }
            Row {
                hash: w[0],
                inline: key,
                len,
                long,
                accs: self.accs(r),
            }
        })
    }
}

#[cfg(test)]
mod tests;
