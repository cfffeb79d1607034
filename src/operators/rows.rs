//! Rows an operator holds by reference: where a record can be read back from its source
//! (partition, offset, length) instead of its bytes, a key interned without allocating per lookup,
//! and the byte helpers joined output is built with. Shared by the join operators and dedupe.

use crate::checkpoint::codec::{Dec, Enc};
use crate::event::Event;
use hashbrown::HashMap;

/// Where a record can be read back from its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecRef {
    pub part: u16,
    pub pos: u64,
    pub len: u32,
}

impl RecRef {
    pub fn of(e: &Event) -> RecRef {
        RecRef {
            part: e.part,
            pos: e.pos,
            len: e.len,
        }
    }
}

/// A key looked up without allocating: hashes and compares as the `(hash, Box<[u8]>)` it finds.
#[derive(Hash)]
pub struct KeyRef<'a>(pub u64, pub &'a [u8]);

impl hashbrown::Equivalent<(u64, Box<[u8]>)> for KeyRef<'_> {
    fn equivalent(&self, k: &(u64, Box<[u8]>)) -> bool {
        self.0 == k.0 && self.1 == &*k.1
    }
}

/// Keys by (hash, bytes) -> dense index, so per-key state lives in a `Vec` and timers can name a
/// key by a small number. A removed key's index is reused, so the index stays as small as the
/// number of keys held, not the number ever seen.
#[derive(Default)]
pub struct Keys {
    index: HashMap<(u64, Box<[u8]>), u32>,
    /// (hash, bytes) by index; `None` for a free index.
    list: Vec<Option<(u64, Box<[u8]>)>>,
    free: Vec<u32>,
}

impl Keys {
    /// The index of a key, added if new (allocates only then); true when new.
    pub fn intern(&mut self, hash: u64, key: &[u8]) -> (u32, bool) {
        if let Some(&i) = self.index.get(&KeyRef(hash, key)) {
            return (i, false);
        }
        let entry = Some((hash, Box::<[u8]>::from(key)));
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
        self.index.insert((hash, Box::from(key)), i);
        (i, true)
    }

    /// The (hash, bytes) of key `i`.
    pub fn get(&self, i: u32) -> Option<&(u64, Box<[u8]>)> {
        self.list.get(i as usize).and_then(Option::as_ref)
    }

    /// Forgets key `i`; its index will be given to a new key.
    pub fn remove(&mut self, i: u32) {
        if let Some((hash, key)) = self.list.get_mut(i as usize).and_then(Option::take) {
            self.index.remove(&KeyRef(hash, &key));
            self.free.push(i);
        }
    }

    /// Approximate bytes the index holds: per key its bytes twice (map and list) and the slots.
    pub fn bytes(&self) -> u64 {
        let keys: usize = self.list.iter().flatten().map(|(_, k)| k.len()).sum();
        (2 * keys + self.list.len() * 40 + self.index.len() * 40) as u64
    }

    /// Keys held now.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
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

/// Appends a held row (time and reference) to checkpoint state.
pub fn put(e: &mut Enc, t: i64, r: &RecRef) {
    e.i64(t);
    e.u32(u32::from(r.part));
    e.u64(r.pos);
    e.u32(r.len);
}

pub fn get(d: &mut Dec) -> Result<(i64, RecRef), String> {
    let t = d.i64("row time")?;
    let part = u16::try_from(d.u32("partition")?).map_err(|_| "partition out of range")?;
    Ok((
        t,
        RecRef {
            part,
            pos: d.u64("offset")?,
            len: d.u32("length")?,
        },
    ))
}
