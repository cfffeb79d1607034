//! The event as it travels between shards: a fixed-size, `Copy` header, optionally followed in the
//! ring by payload slots.
//!
//! Sources and operators extract only what the consuming operator needs (event time, key, value
//! slots) into an [`Event`]; the common case (a short key, at most [`INLINE_VALUES`] compact values,
//! no row) fits the 128-byte header alone, so moving it through a ring is one plain copy and the hot
//! path never allocates. Anything larger travels *by value* in payload slots right behind the
//! header (`extra` bytes, [`payload_slots`] of them): a key longer than [`INLINE_KEY_BYTES`], values
//! past the inline slots or too wide for one word, the record's row for operators that output whole
//! records (joins, dedupe), or an opaque blob (partial aggregates). [`Rec`] is the view operators
//! read: header plus parsed payload.
//!
//! Layout of the payload (sections present as `flags` say, in this order):
//! ```text
//! KEY_OUT: u32 key length, key bytes
//! WIDE:    u16 count, count x (u16 slot, u8 kind, 16 value bytes)
//! ROW:     u32 row length, row bytes
//! BLOB:    every remaining byte
//! ```
//! Every field of [`Event`] is an integer or a byte array and the struct has no padding, so any
//! 128 bytes are a valid `Event`: payload slots are events whose bytes are just bytes.
//!
//! Ordering tag: `(seen_max, fired?, pos, sub)` orders the records a derived stream carries within
//! a chunk (see `runtime::shard::merge`): `seen_max` is the position in the chunk (the chunk's
//! running maximum event time before the record's cause), [`FIRED`] marks output of a watermark
//! step (ordered before data at the same position), `pos` and `sub` break ties without depending
//! on which shard sent the record.

use rust_decimal::Decimal;

/// Bytes of key an event carries in its header; longer keys travel in the payload.
pub const INLINE_KEY_BYTES: usize = 39;
/// Value slots an event carries in its header; more travel in the payload.
pub const INLINE_VALUES: usize = 4;
/// Bytes one ring slot holds.
pub const SLOT_BYTES: usize = 128;

/// One value as aggregates see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// Field absent or JSON `null`: ignored by every aggregate except `count()`.
    Null,
    Int(i64),
    /// A number no exact decimal holds (an exponent too large or too small).
    Float(f64),
    /// A 64-bit hash of the value's canonical bytes (input of `count_distinct`).
    Hash(u64),
    /// A number with a fraction, exactly as written (28 significant digits).
    Dec(Decimal),
}

/// Slot kinds, 4 bits per inline slot in [`Event::kinds`].
mod kind {
    pub const NULL: u8 = 0;
    pub const INT: u8 = 1;
    pub const FLOAT: u8 = 2;
    pub const HASH: u8 = 3;
    /// A decimal packed into one word (see `pack_dec`).
    pub const DEC: u8 = 4;
    /// The value is in the payload's WIDE section under the same slot index.
    pub const WIDE: u8 = 5;
    /// A full 16-byte decimal (WIDE section only).
    pub const DEC_WIDE: u8 = 6;
}

/// A decimal in one word when its mantissa fits 59 bits: scale in the top 5 bits.
fn pack_dec(d: Decimal) -> Option<u64> {
    let m = d.mantissa();
    const LIM: i128 = 1 << 58;
    if !(-LIM..LIM).contains(&m) {
        return None;
    }
    Some((u64::from(d.scale()) << 59) | ((m as i64 as u64) & ((1 << 59) - 1)))
}

fn unpack_dec(w: u64) -> Decimal {
    let scale = (w >> 59) as u32;
    // Sign-extend the 59-bit mantissa.
    let m = ((w << 5) as i64) >> 5;
    Decimal::try_from_i128_with_scale(i128::from(m), scale.min(28)).unwrap_or_default()
}

pub(crate) fn wide_bytes(v: Value) -> (u8, [u8; 16]) {
    let mut b = [0u8; 16];
    let k = match v {
        Value::Null => kind::NULL,
        Value::Int(i) => {
            b[..8].copy_from_slice(&i.to_le_bytes());
            kind::INT
        }
        Value::Float(f) => {
            b[..8].copy_from_slice(&f.to_bits().to_le_bytes());
            kind::FLOAT
        }
        Value::Hash(h) => {
            b[..8].copy_from_slice(&h.to_le_bytes());
            kind::HASH
        }
        Value::Dec(d) => {
            b = d.serialize();
            kind::DEC_WIDE
        }
    };
    (k, b)
}

pub(crate) fn from_wide(k: u8, b: &[u8]) -> Value {
    let word = || {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[..8]);
        u64::from_le_bytes(w)
    };
    match k {
        kind::INT => Value::Int(word() as i64),
        kind::FLOAT => Value::Float(f64::from_bits(word())),
        kind::HASH => Value::Hash(word()),
        kind::DEC_WIDE => {
            let mut a = [0u8; 16];
            a.copy_from_slice(&b[..16]);
            Value::Dec(Decimal::deserialize(a))
        }
        _ => Value::Null,
    }
}

/// The kind of change a record is, as Flink's `RowKind`: an insertion, the old and new value of
/// an update, or a deletion. An event carries it in two flag bits ([`RETRACT`] for `-U` and `-D`,
/// [`UPDATE`] for `-U` and `+U`), so an insert-only stream carries nothing extra.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowKind {
    Insert,
    UpdateBefore,
    UpdateAfter,
    Delete,
}

impl RowKind {
    /// The event flags that mark this kind.
    #[inline]
    pub fn flags(self) -> u8 {
        match self {
            RowKind::Insert => 0,
            RowKind::UpdateBefore => RETRACT | UPDATE,
            RowKind::UpdateAfter => UPDATE,
            RowKind::Delete => RETRACT,
        }
    }

    /// The kind an event's flags mark.
    #[inline]
    pub fn of_flags(flags: u8) -> RowKind {
        match (flags & RETRACT != 0, flags & UPDATE != 0) {
            (false, false) => RowKind::Insert,
            (true, true) => RowKind::UpdateBefore,
            (false, true) => RowKind::UpdateAfter,
            (true, false) => RowKind::Delete,
        }
    }

    /// `-U` or `-D`: it takes a row back.
    #[inline]
    pub fn is_retraction(self) -> bool {
        matches!(self, RowKind::UpdateBefore | RowKind::Delete)
    }

    /// Flink's short string: `+I`, `-U`, `+U`, `-D`.
    pub fn short(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }
}

/// What a ring message is. Data carries an event; the others are control messages in-band with
/// data. A byte, not an enum, so that any bytes are a valid [`Event`] (payload slots).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Tag(pub u8);

impl Tag {
    pub const DATA: Tag = Tag(0);
    /// End of one chunk's events for this receiver: `ts` = largest event time in the whole chunk
    /// (i64::MIN if it had none), `pos` = chunk sequence number, `len` = flags (see `CHUNK_*`),
    /// `seen_max` = ingestion time of the chunk (ns since the runtime's epoch), `part` = partition.
    /// On the rings of a derived depth it says the sender has sent everything of that chunk.
    pub const CHUNK_END: Tag = Tag(1);
    /// Checkpoint barrier: `pos` = checkpoint id. Shard 0 sends it to every shard ahead of the
    /// first event of one of its chunks, so every receiver meets it at the same chunk boundary:
    /// state then covers exactly the chunks before it.
    pub const BARRIER: Tag = Tag(2);
    /// Phase two of a combined (two-phase) aggregate: the partial accumulators of one key and
    /// pane in the BLOB payload, combined where they were read. `ts` = pane start, `seen_max` =
    /// the chunk's running maximum where it was sent (it applies at that watermark).
    pub const PARTIAL: Tag = Tag(3);
}

/// `flags`: output of a watermark step, not of a record's arrival (orders before data at the
/// same position).
pub const FIRED: u8 = 1;
/// `flags`: the key is in the payload (`key_len` is 0 in the header).
pub const KEY_OUT: u8 = 2;
/// `flags`: the payload has a WIDE section.
pub const WIDE: u8 = 4;
/// `flags`: the payload has a ROW section (the record itself, by value).
pub const ROW: u8 = 8;
/// `flags`: the payload ends with a BLOB section.
pub const BLOB: u8 = 16;
/// `flags`: a key field was missing or null. Joins and dedupe never match such a key (SQL NULL).
pub const NULL_KEY: u8 = 32;
/// `flags`: this record takes back an earlier one of its stream (`-U` or `-D`: the previous
/// result of a window that re-fires, an aggregate's previous row): consumers that aggregate
/// subtract it.
pub const RETRACT: u8 = 64;
/// `flags`: this record is one side of an update (`-U` with [`RETRACT`], else `+U`); see
/// [`RowKind::flags`].
pub const UPDATE: u8 = 128;

/// Flag in a `CHUNK_END`'s `len`: this was the partition's last chunk.
pub const CHUNK_LAST: u32 = 1;
/// Flag in a `CHUNK_END`'s `len`: the partition had no data for its idle timeout.
pub const CHUNK_IDLE: u32 = 2;
/// Flag in a `CHUNK_END`'s `len`: an empty padding slot of the chunk order, of no partition.
pub const CHUNK_PAD: u32 = 4;
/// Flag in a `CHUNK_END`'s `len`: `hash` holds the partition's next Kafka offset after this chunk.
pub const CHUNK_OFFSET: u32 = 8;

#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct Event {
    /// Event time, epoch ms.
    pub ts: i64,
    /// Largest event time among the earlier events of the same chunk (i64::MIN if none): with the
    /// chunk-end markers before it, this gives the exact watermark at this event's arrival. For a
    /// derived record: the position of its cause (see the module doc).
    pub seen_max: i64,
    /// Hash of the key bytes; picks the key group and indexes state.
    pub hash: u64,
    /// Source position of the raw record (byte offset in a file, index for the generator, Kafka
    /// offset); the ordering tag's origin for derived records.
    pub pos: u64,
    /// Tie-break of the ordering tag for derived records (0 for source records).
    pub sub: u64,
    /// Inline value slots; see `kinds`.
    pub vals: [u64; INLINE_VALUES],
    /// Length of the raw record at `pos` in its source (0 when it cannot be read back).
    pub len: u32,
    /// Payload bytes in the slots right behind this header.
    pub extra: u32,
    /// Global partition index (across all sources) of the record's origin.
    pub part: u16,
    /// The operator input port this event is keyed for (`plan::Plan::ports`).
    pub port: u16,
    pub tag: Tag,
    /// See `FIRED`, `KEY_OUT`, `WIDE`, `ROW`, `BLOB`, `NULL_KEY`, `RETRACT`.
    pub flags: u8,
    /// 4 bits per inline slot, slot i at bits 4i..4i+4.
    pub kinds: u16,
    pub key_len: u8,
    /// Key values: each field's canonical JSON token, fields separated by a 0 byte (which JSON
    /// never contains unescaped); zero-padded.
    pub key: [u8; INLINE_KEY_BYTES],
}

const _: () = assert!(std::mem::size_of::<Event>() == SLOT_BYTES);

/// Ring slots the payload of `extra` bytes takes behind its header.
#[inline]
pub fn payload_slots(extra: u32) -> usize {
    (extra as usize).div_ceil(SLOT_BYTES)
}

/// The bytes of `slots` (payload slots read back from a ring).
#[inline]
pub fn slot_bytes(slots: &[Event]) -> &[u8] {
    // SAFETY: `Event` is `repr(C)` with no padding (the size assertion above and the field layout:
    // 5 x u64, 4 x u64, 2 x u32, 2 x u16, 2 x u8, u16, u8, 39 x u8 = 128 bytes), and all of its
    // fields are initialised integers or byte arrays, so its memory is `size_of` initialised
    // bytes; the slice borrows `slots` for its lifetime.
    unsafe { std::slice::from_raw_parts(slots.as_ptr().cast::<u8>(), std::mem::size_of_val(slots)) }
}

/// One payload slot holding `bytes` (at most [`SLOT_BYTES`]), zero-padded.
#[inline]
pub fn slot_of(bytes: &[u8]) -> Event {
    let mut b = [0u8; SLOT_BYTES];
    let n = bytes.len().min(SLOT_BYTES);
    b[..n].copy_from_slice(&bytes[..n]);
    // SAFETY: every field of `Event` is an integer or a byte array (`Tag` is a transparent `u8`)
    // and the struct has no padding, so every 128-byte pattern is a valid `Event`; transmuting
    // by value copies into a properly aligned `Event`.
    unsafe { std::mem::transmute::<[u8; SLOT_BYTES], Event>(b) }
}

impl Event {
    pub const EMPTY: Event = Event {
        ts: 0,
        seen_max: i64::MIN,
        hash: 0,
        pos: 0,
        sub: 0,
        vals: [0; INLINE_VALUES],
        len: 0,
        extra: 0,
        part: 0,
        port: 0,
        tag: Tag::DATA,
        flags: 0,
        kinds: 0,
        key_len: 0,
        key: [0; INLINE_KEY_BYTES],
    };

    /// The inline key (empty when the key is in the payload: see [`Rec::key`]).
    #[inline]
    pub fn key(&self) -> &[u8] {
        &self.key[..(self.key_len as usize).min(INLINE_KEY_BYTES)]
    }

    /// Sets an inline key; returns false (and leaves the event unchanged) if it is longer than
    /// [`INLINE_KEY_BYTES`] (then it must go in the payload).
    #[inline]
    pub fn set_key(&mut self, key: &[u8]) -> bool {
        if key.len() > INLINE_KEY_BYTES {
            return false;
        }
        self.key[..key.len()].copy_from_slice(key);
        // Zero padding lets state tables compare keys a word at a time (see `operators::window::acc_table`).
        self.key[key.len()..].fill(0);
        self.key_len = key.len() as u8;
        self.flags &= !KEY_OUT;
        true
    }

    /// Whether this header is followed by payload slots.
    #[inline]
    pub fn has_payload(&self) -> bool {
        self.extra != 0
    }

    /// Inline slot `slot`'s value; [`Value::Null`] for a wide slot (read it through [`Rec`]).
    #[inline]
    pub fn value(&self, slot: usize) -> Value {
        let bits = self.vals[slot];
        match ((self.kinds >> (4 * slot)) & 15) as u8 {
            kind::INT => Value::Int(bits as i64),
            kind::FLOAT => Value::Float(f64::from_bits(bits)),
            kind::HASH => Value::Hash(bits),
            kind::DEC => Value::Dec(unpack_dec(bits)),
            _ => Value::Null,
        }
    }

    /// Sets inline slot `slot`; false when the value does not fit one word (a decimal with a
    /// mantissa over 59 bits), which then must go in the payload's WIDE section.
    #[inline]
    pub fn set_value(&mut self, slot: usize, v: Value) -> bool {
        let (k, bits) = match v {
            Value::Null => (kind::NULL, 0),
            Value::Int(i) => (kind::INT, i as u64),
            Value::Float(f) => (kind::FLOAT, f.to_bits()),
            Value::Hash(h) => (kind::HASH, h),
            Value::Dec(d) => match pack_dec(d) {
                Some(w) => (kind::DEC, w),
                None => {
                    self.set_kind(slot, kind::WIDE);
                    self.vals[slot] = 0;
                    return false;
                }
            },
        };
        self.vals[slot] = bits;
        self.set_kind(slot, k);
        true
    }

    #[inline]
    fn set_kind(&mut self, slot: usize, k: u8) {
        self.kinds = (self.kinds & !(15 << (4 * slot))) | (u16::from(k) << (4 * slot));
    }

    /// True when an inline slot's value lives in the payload.
    #[inline]
    fn is_wide(&self, slot: usize) -> bool {
        ((self.kinds >> (4 * slot)) & 15) as u8 == kind::WIDE
    }
}

/// Hash used for key groups and state tables. Fixed seed: every shard must agree on it.
#[inline]
pub fn hash_key(key: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x5eed_5107).hash_one(key)
}

/// The hash `count_distinct` counts a number by: that of its canonical text, the normalized
/// decimal, so a number counts once however it was written (`2.5`, `2.50` and `25e-1` are one
/// value; `2.0` is `2`). An integer's text is its JSON token, so the record binding hashes integer
/// tokens as they are and parses only the others. `None` for what is not a number.
pub fn number_hash(v: Value) -> Option<u64> {
    use std::io::Write;
    // The longest text: a 29-digit mantissa, its sign and point (decimal); 20 (i64); 24 (f64).
    let mut buf = [0u8; 48];
    let mut w = &mut buf[..];
    let written = match v {
        Value::Int(i) => write!(w, "{i}"),
        Value::Dec(d) => write!(w, "{}", d.normalize()),
        // A float is a number no decimal holds: it never equals an integer or a decimal.
        Value::Float(f) => write!(w, "{f:?}"),
        Value::Null | Value::Hash(_) => return None,
    };
    let len = 48 - w.len();
    match written {
        Ok(()) => Some(hash_key(&buf[..len])),
        // Cannot happen (the buffer holds every text above), but never a wrong count for it.
        Err(_) => Some(hash_key(format!("{v:?}").as_bytes())),
    }
}

/// Builds an event's payload from its parts and sets the header's `extra` and flags. Reused:
/// the buffer is cleared, never shrunk, so steady state allocates nothing.
#[derive(Default)]
pub struct PayloadBuf {
    pub bytes: Vec<u8>,
    wide: Vec<(u16, Value)>,
}

impl PayloadBuf {
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.wide.clear();
    }

    /// Sets `ev`'s key, inline when it fits, else noted for the payload (written by `finish`).
    pub fn set_key(&mut self, ev: &mut Event, key: &[u8]) {
        if !ev.set_key(key) {
            ev.key_len = 0;
            ev.key.fill(0);
            ev.flags |= KEY_OUT;
            self.bytes
                .extend_from_slice(&(key.len() as u32).to_le_bytes());
            self.bytes.extend_from_slice(key);
        }
    }

    /// Sets value slot `slot` of `ev`: inline when it is an inline slot and fits, else wide.
    #[inline]
    pub fn set_value(&mut self, ev: &mut Event, slot: usize, v: Value) {
        if slot < INLINE_VALUES && ev.set_value(slot, v) {
            return;
        }
        self.wide.push((slot as u16, v));
    }

    /// Appends the WIDE section (if any value went there), then `row` and `blob`, and sets
    /// `ev.extra` and its flags. Call once per event, after the key and values.
    #[inline]
    pub fn finish(&mut self, ev: &mut Event, row: Option<&[u8]>, blob: Option<&[u8]>) {
        if !self.wide.is_empty() {
            ev.flags |= WIDE;
            self.bytes
                .extend_from_slice(&(self.wide.len() as u16).to_le_bytes());
            for &(slot, v) in &self.wide {
                let (k, b) = wide_bytes(v);
                self.bytes.extend_from_slice(&slot.to_le_bytes());
                self.bytes.push(k);
                self.bytes.extend_from_slice(&b);
            }
        } else {
            ev.flags &= !WIDE;
        }
        if let Some(row) = row {
            ev.flags |= ROW;
            self.bytes
                .extend_from_slice(&(row.len() as u32).to_le_bytes());
            self.bytes.extend_from_slice(row);
        } else {
            ev.flags &= !ROW;
        }
        if let Some(blob) = blob {
            ev.flags |= BLOB;
            self.bytes.extend_from_slice(blob);
        } else {
            ev.flags &= !BLOB;
        }
        ev.extra = self.bytes.len() as u32;
    }

    /// The payload as ring slots, in order, to push right behind the header.
    pub fn slots(&self) -> impl Iterator<Item = Event> + '_ {
        self.bytes.chunks(SLOT_BYTES).map(slot_of)
    }
}

/// A payload that does not parse (a bug in a sender, or a damaged snapshot): never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed event payload: {0}")]
pub struct PayloadError(pub &'static str);

/// An event as operators read it: the header and its parsed payload.
#[derive(Clone, Copy, Debug)]
pub struct Rec<'a> {
    pub ev: &'a Event,
    key: &'a [u8],
    wide: &'a [u8],
    row: Option<&'a [u8]>,
    blob: &'a [u8],
}

fn take<'a>(b: &mut &'a [u8], n: usize, what: &'static str) -> Result<&'a [u8], PayloadError> {
    if b.len() < n {
        return Err(PayloadError(what));
    }
    let (h, t) = b.split_at(n);
    *b = t;
    Ok(h)
}

fn take_u32(b: &mut &[u8], what: &'static str) -> Result<usize, PayloadError> {
    let h = take(b, 4, what)?;
    Ok(u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize)
}

impl<'a> Rec<'a> {
    /// An event without payload.
    #[inline]
    pub fn of(ev: &'a Event) -> Rec<'a> {
        Rec {
            ev,
            key: ev.key(),
            wide: &[],
            row: None,
            blob: &[],
        }
    }

    /// An event with its payload bytes (`ev.extra` of them, or more: slot padding is ignored).
    pub fn parse(ev: &'a Event, payload: &'a [u8]) -> Result<Rec<'a>, PayloadError> {
        let mut b = payload
            .get(..ev.extra as usize)
            .ok_or(PayloadError("shorter than its header says"))?;
        let mut r = Rec::of(ev);
        if ev.flags & KEY_OUT != 0 {
            let n = take_u32(&mut b, "key length")?;
            r.key = take(&mut b, n, "key")?;
        }
        if ev.flags & WIDE != 0 {
            let h = take(&mut b, 2, "wide count")?;
            let n = usize::from(u16::from_le_bytes([h[0], h[1]]));
            r.wide = take(&mut b, n * 19, "wide values")?;
        }
        if ev.flags & ROW != 0 {
            let n = take_u32(&mut b, "row length")?;
            r.row = Some(take(&mut b, n, "row")?);
        }
        if ev.flags & BLOB != 0 {
            r.blob = b;
        }
        Ok(r)
    }

    /// The key bytes, inline or from the payload.
    #[inline]
    pub fn key(&self) -> &'a [u8] {
        self.key
    }

    /// Value slot `slot`, inline or wide.
    pub fn value(&self, slot: usize) -> Value {
        if slot < INLINE_VALUES && !self.ev.is_wide(slot) {
            return self.ev.value(slot);
        }
        for w in self.wide.chunks_exact(19) {
            if usize::from(u16::from_le_bytes([w[0], w[1]])) == slot {
                return from_wide(w[2], &w[3..]);
            }
        }
        Value::Null
    }

    /// The record itself, when the sender put it in.
    #[inline]
    pub fn row(&self) -> Option<&'a [u8]> {
        self.row
    }

    /// The opaque payload (partial aggregates).
    #[inline]
    pub fn blob(&self) -> &'a [u8] {
        self.blob
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn value_slots_round_trip_without_disturbing_neighbours() {
        let mut e = Event::EMPTY;
        e.set_value(0, Value::Int(-5));
        e.set_value(1, Value::Float(2.5));
        e.set_value(2, Value::Hash(77));
        let d = Decimal::from_str("-1234.5678").unwrap();
        assert!(e.set_value(3, Value::Dec(d)));
        assert_eq!(e.value(0), Value::Int(-5));
        assert_eq!(e.value(1), Value::Float(2.5));
        assert_eq!(e.value(2), Value::Hash(77));
        assert_eq!(e.value(3), Value::Dec(d));
        e.set_value(1, Value::Null);
        assert_eq!(e.value(0), Value::Int(-5));
        assert_eq!(e.value(1), Value::Null);
        assert_eq!(e.value(3), Value::Dec(d), "scale and sign survive packing");
    }

    #[test]
    fn decimals_pack_exactly_or_go_wide() {
        for s in [
            "0.0001",
            "-0.5",
            "1.2345",
            "9999999999999.9999",
            "0.000000000000000000000000001",
        ] {
            let d = Decimal::from_str(s).unwrap();
            let w = pack_dec(d).expect(s);
            assert_eq!(unpack_dec(w), d, "{s}");
            assert_eq!(unpack_dec(w).to_string(), d.to_string(), "{s}: scale kept");
        }
        let big = Decimal::from_str("123456789012345678901234.5678").unwrap();
        assert!(pack_dec(big).is_none());
        let mut e = Event::EMPTY;
        let mut p = PayloadBuf::default();
        p.set_value(&mut e, 0, Value::Dec(big));
        p.set_value(&mut e, 6, Value::Int(7));
        p.finish(&mut e, None, None);
        let bytes = p.bytes.clone();
        let r = Rec::parse(&e, &bytes).unwrap();
        assert_eq!(r.value(0), Value::Dec(big));
        assert_eq!(r.value(6), Value::Int(7));
        assert_eq!(r.value(5), Value::Null);
    }

    #[test]
    fn a_shorter_key_leaves_no_old_bytes_behind() {
        // State tables compare keys as zero-padded words: the padding must be zeros whatever the
        // event held before.
        let mut e = Event::EMPTY;
        assert!(e.set_key(&[b'z'; INLINE_KEY_BYTES]));
        for len in (0..=INLINE_KEY_BYTES).rev() {
            let k: Vec<u8> = (1..=len as u8).collect();
            assert!(e.set_key(&k));
            assert_eq!(e.key(), &k[..]);
            assert!(e.key[len..].iter().all(|&b| b == 0), "len {len}");
        }
    }

    #[test]
    fn long_keys_rows_and_blobs_travel_in_payload_slots() {
        for (klen, rlen, blen) in [
            (0, 0, 0),
            (200, 0, 0),
            (5, 61, 0),
            (300, 1000, 7),
            (0, 0, 129),
        ] {
            let key: Vec<u8> = (0..klen).map(|i| b'a' + (i % 26) as u8).collect();
            let row: Vec<u8> = (0..rlen).map(|i| (i * 7) as u8).collect();
            let blob: Vec<u8> = (0..blen).map(|i| (i * 3 + 1) as u8).collect();
            let mut e = Event::EMPTY;
            let mut p = PayloadBuf::default();
            p.set_key(&mut e, &key);
            p.finish(
                &mut e,
                (rlen > 0).then_some(&row[..]),
                (blen > 0).then_some(&blob[..]),
            );
            let slots: Vec<Event> = p.slots().collect();
            assert_eq!(slots.len(), payload_slots(e.extra));
            let bytes = slot_bytes(&slots);
            let r = Rec::parse(&e, bytes).unwrap();
            assert_eq!(r.key(), &key[..], "key {klen}");
            assert_eq!(r.row().unwrap_or(&[]), &row[..]);
            assert_eq!(r.blob(), &blob[..]);
        }
    }

    #[test]
    fn a_damaged_payload_is_an_error_not_a_panic() {
        let mut e = Event::EMPTY;
        e.flags = KEY_OUT | ROW | WIDE;
        for extra in [0u32, 3, 4, 9, 40] {
            e.extra = extra;
            let junk = vec![0xffu8; extra as usize];
            assert!(Rec::parse(&e, &junk).is_err(), "extra {extra}");
        }
        e.extra = 10;
        assert!(
            Rec::parse(&e, &[0u8; 4]).is_err(),
            "payload shorter than extra"
        );
    }

    #[test]
    fn overlong_inline_key_is_refused() {
        let mut e = Event::EMPTY;
        assert!(e.set_key(&[b'x'; INLINE_KEY_BYTES]));
        assert!(!e.set_key(&[b'x'; INLINE_KEY_BYTES + 1]));
        assert_eq!(e.key().len(), INLINE_KEY_BYTES);
    }
}
