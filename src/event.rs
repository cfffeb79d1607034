//! The event as it travels between shards: a fixed-size, `Copy` record of the fields a pipeline uses.
//!
//! Sources parse only what the plan needs (event time, group-by key, aggregate inputs) into an
//! [`Event`]; the raw record stays in its source and can be recalled by (`part`, `pos`, `len`) for the
//! rare paths that need it (late side output). An `Event` owns no heap memory, so moving it through a
//! ring is a plain copy and the hot path never allocates.

/// Bytes of group-by key an event carries inline. A longer key is rejected to the dead-letter output.
pub const INLINE_KEY_BYTES: usize = 54;
/// Aggregate input values an event carries (distinct fields across a window's aggregates).
pub const MAX_VALUE_SLOTS: usize = 4;

/// Kind of a value slot, 2 bits each in [`Event::kinds`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum SlotKind {
    /// Field absent or JSON `null`: ignored by every aggregate except `count()`.
    Null = 0,
    /// `bits` is an `i64`.
    Int = 1,
    /// `bits` is an `f64` (`f64::to_bits`).
    Float = 2,
    /// `bits` is a 64-bit hash of the value's canonical bytes (input of `count_distinct`).
    Hash = 3,
}

/// One value slot as aggregates see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Float(f64),
    Hash(u64),
}

/// What a ring message is. Data carries an event; the others are control messages in-band with data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Tag {
    Data = 0,
    /// End of one chunk's events for this receiver: `ts` = largest event time in the whole chunk
    /// (i64::MIN if it had none), `pos` = chunk sequence number, `len` = flags (see `CHUNK_*`),
    /// `seen_max` = ingestion time of the chunk (ns since the runtime's epoch), `part` = partition.
    ChunkEnd = 1,
    /// Checkpoint barrier: `pos` = checkpoint id. Shard 0 sends it to every shard ahead of the first
    /// event of one of its chunks, so every receiver meets it at the same chunk boundary: state
    /// then covers exactly the chunks before it.
    Barrier = 2,
    /// Phase two of a combined (salted) window aggregate: the partial accumulators of one key and
    /// pane, combined where they were read. `ts` = pane start, `seen_max` = the chunk's running
    /// maximum where it was sent (it applies at that watermark), `len` = payload bytes in all;
    /// the first [`PARTIAL_HEAD_BYTES`] are in `vals` and `pos`, the rest follow in `PartialMore`
    /// messages right behind it (see [`pack_partial`]).
    Partial = 3,
    /// The next [`PARTIAL_MORE_BYTES`] of a `Partial`'s payload, in `vals`, `pos` and `key`.
    PartialMore = 4,
}

/// Payload bytes a `Partial` message carries itself.
pub const PARTIAL_HEAD_BYTES: usize = 8 * MAX_VALUE_SLOTS + 8;
/// Payload bytes each `PartialMore` message carries.
pub const PARTIAL_MORE_BYTES: usize = PARTIAL_HEAD_BYTES + INLINE_KEY_BYTES;

/// Messages a partial with `bytes` of payload takes.
pub fn partial_messages(bytes: usize) -> usize {
    1 + bytes
        .saturating_sub(PARTIAL_HEAD_BYTES)
        .div_ceil(PARTIAL_MORE_BYTES)
}

/// Copies up to `PARTIAL_HEAD_BYTES` of `from` into `vals` and `pos`; returns how many.
fn put_words(ev: &mut Event, from: &[u8]) -> usize {
    let mut b = [0u8; PARTIAL_HEAD_BYTES];
    let n = from.len().min(PARTIAL_HEAD_BYTES);
    b[..n].copy_from_slice(&from[..n]);
    for (i, w) in ev.vals.iter_mut().enumerate() {
        *w = u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap_or_default());
    }
    ev.pos = u64::from_le_bytes(b[8 * MAX_VALUE_SLOTS..].try_into().unwrap_or_default());
    n
}

fn get_words(ev: &Event, n: usize, into: &mut Vec<u8>) {
    let mut b = [0u8; PARTIAL_HEAD_BYTES];
    for (i, w) in ev.vals.iter().enumerate() {
        b[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
    }
    b[8 * MAX_VALUE_SLOTS..].copy_from_slice(&ev.pos.to_le_bytes());
    into.extend_from_slice(&b[..n]);
}

/// Cuts a partial's `payload` into messages: `head` (tag, key, pane, op, part, seen_max already
/// set) first, then `PartialMore`s, each handed to `send` in order.
pub fn pack_partial(head: &Event, payload: &[u8], mut send: impl FnMut(&Event)) {
    let mut ev = *head;
    ev.tag = Tag::Partial;
    ev.len = payload.len() as u32;
    let mut at = put_words(&mut ev, payload);
    send(&ev);
    ev.tag = Tag::PartialMore;
    while at < payload.len() {
        at += put_words(&mut ev, &payload[at..]);
        let n = (payload.len() - at).min(INLINE_KEY_BYTES);
        ev.key = [0; INLINE_KEY_BYTES];
        ev.key[..n].copy_from_slice(&payload[at..at + n]);
        at += n;
        send(&ev);
    }
}

/// Appends a partial message's share of the payload to `into` (cleared by the caller at each
/// `Partial`); true once the payload (`head.len` bytes) is complete.
pub fn unpack_partial(ev: &Event, total: usize, into: &mut Vec<u8>) -> bool {
    let left = total.saturating_sub(into.len());
    get_words(ev, left.min(PARTIAL_HEAD_BYTES), into);
    if ev.tag == Tag::PartialMore {
        let left = total.saturating_sub(into.len());
        into.extend_from_slice(&ev.key[..left.min(INLINE_KEY_BYTES)]);
    }
    into.len() >= total
}

/// Flag in a `ChunkEnd`'s `len`: this was the partition's last chunk.
pub const CHUNK_LAST: u32 = 1;
/// Flag in a `ChunkEnd`'s `len`: the partition had no data for its idle timeout.
pub const CHUNK_IDLE: u32 = 2;
/// Flag in a `ChunkEnd`'s `len`: an empty padding slot of the chunk order, of no partition.
pub const CHUNK_PAD: u32 = 4;
/// Flag in a `ChunkEnd`'s `len`: `hash` holds the partition's next Kafka offset after this chunk.
pub const CHUNK_OFFSET: u32 = 8;

#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct Event {
    /// Event time, epoch ms.
    pub ts: i64,
    /// Largest event time among the earlier events of the same chunk (i64::MIN if none): with the
    /// chunk-end markers before it, this gives the exact watermark at this event's arrival.
    pub seen_max: i64,
    /// Hash of the key bytes; picks the key group and indexes state.
    pub hash: u64,
    /// Source position of the raw record (byte offset in a file, index for the generator).
    pub pos: u64,
    /// Aggregate inputs; see `kinds`.
    pub vals: [u64; MAX_VALUE_SLOTS],
    /// Length of the raw record at `pos`.
    pub len: u32,
    /// Global partition index (across all sources).
    pub part: u16,
    pub tag: Tag,
    /// Which window operator this event is keyed for.
    pub op: u8,
    /// 2 bits per slot, slot i at bits 2i..2i+2; see [`SlotKind`].
    pub kinds: u8,
    pub key_len: u8,
    /// Group-by values: each field's raw JSON token, fields separated by a 0 byte (which JSON never
    /// contains unescaped).
    pub key: [u8; INLINE_KEY_BYTES],
}

const _: () = assert!(std::mem::size_of::<Event>() == 128);

impl Event {
    pub const EMPTY: Event = Event {
        ts: 0,
        seen_max: i64::MIN,
        hash: 0,
        pos: 0,
        vals: [0; MAX_VALUE_SLOTS],
        len: 0,
        part: 0,
        tag: Tag::Data,
        op: 0,
        kinds: 0,
        key_len: 0,
        key: [0; INLINE_KEY_BYTES],
    };

    #[inline]
    pub fn key(&self) -> &[u8] {
        &self.key[..self.key_len as usize]
    }

    /// Sets the key; returns false (and leaves the event unchanged) if it is longer than
    /// [`INLINE_KEY_BYTES`].
    #[inline]
    pub fn set_key(&mut self, key: &[u8]) -> bool {
        if key.len() > INLINE_KEY_BYTES {
            return false;
        }
        self.key[..key.len()].copy_from_slice(key);
        // Zero padding lets state tables compare keys a word at a time (see `state::acc_table`).
        self.key[key.len()..].fill(0);
        self.key_len = key.len() as u8;
        true
    }

    #[inline]
    pub fn value(&self, slot: usize) -> Value {
        let bits = self.vals[slot];
        match (self.kinds >> (2 * slot)) & 3 {
            1 => Value::Int(bits as i64),
            2 => Value::Float(f64::from_bits(bits)),
            3 => Value::Hash(bits),
            _ => Value::Null,
        }
    }

    #[inline]
    pub fn set_value(&mut self, slot: usize, v: Value) {
        let (kind, bits) = match v {
            Value::Null => (SlotKind::Null, 0),
            Value::Int(i) => (SlotKind::Int, i as u64),
            Value::Float(f) => (SlotKind::Float, f.to_bits()),
            Value::Hash(h) => (SlotKind::Hash, h),
        };
        self.vals[slot] = bits;
        self.kinds = (self.kinds & !(3 << (2 * slot))) | ((kind as u8) << (2 * slot));
    }
}

/// Hash used for key groups and state tables. Fixed seed: every shard must agree on it.
#[inline]
pub fn hash_key(key: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x5eed_5107).hash_one(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_slots_round_trip_without_disturbing_neighbours() {
        let mut e = Event::EMPTY;
        e.set_value(0, Value::Int(-5));
        e.set_value(1, Value::Float(2.5));
        e.set_value(2, Value::Hash(77));
        assert_eq!(e.value(0), Value::Int(-5));
        assert_eq!(e.value(1), Value::Float(2.5));
        assert_eq!(e.value(2), Value::Hash(77));
        assert_eq!(e.value(3), Value::Null);
        e.set_value(1, Value::Null);
        assert_eq!(e.value(0), Value::Int(-5));
        assert_eq!(e.value(1), Value::Null);
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
    fn a_partial_payload_survives_any_length_in_messages() {
        let mut head = Event::EMPTY;
        assert!(head.set_key(b"\"hot\""));
        head.ts = 60_000;
        for len in [0, 1, 39, 40, 41, 133, 134, 135, 1000, 4200] {
            let payload: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let mut msgs = Vec::new();
            pack_partial(&head, &payload, |e| msgs.push(*e));
            assert_eq!(msgs.len(), partial_messages(len), "len {len}");
            assert_eq!(msgs[0].tag, Tag::Partial);
            assert_eq!(msgs[0].key(), b"\"hot\"", "the head keeps its key");
            assert_eq!(msgs[0].ts, 60_000);
            assert!(msgs[1..].iter().all(|m| m.tag == Tag::PartialMore));
            let mut got = Vec::new();
            for (i, m) in msgs.iter().enumerate() {
                let done = unpack_partial(m, msgs[0].len as usize, &mut got);
                assert_eq!(done, i + 1 == msgs.len(), "len {len} message {i}");
            }
            assert_eq!(got, payload, "len {len}");
        }
    }

    #[test]
    fn overlong_key_is_refused() {
        let mut e = Event::EMPTY;
        assert!(e.set_key(&[b'x'; INLINE_KEY_BYTES]));
        assert!(!e.set_key(&[b'x'; INLINE_KEY_BYTES + 1]));
        assert_eq!(e.key().len(), INLINE_KEY_BYTES);
    }
}
