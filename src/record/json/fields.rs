//! The set of top-level field names a scan looks for ([`FieldSet`]) and how a key found in a
//! line is matched to one of them: by length and first word, so the common short key costs two
//! integer compares instead of a string compare per name.

use super::decode::unescape_to;
use super::swar::{head_word, load8};
use super::JsonError;

/// Top-level field names the pipeline wants, in slot order (unescaped names).
/// A name listed twice only ever fills its first slot.
#[derive(Debug, Clone)]
pub struct FieldSet {
    names: Vec<Box<str>>,
    /// Per name: (byte length, first <= 8 bytes as a little-endian word, zero-padded), so the
    /// common short key is matched with two integer compares instead of a memcmp call.
    heads: Vec<(usize, u64)>,
    /// Longest name in bytes: an escaped key is unescaped into a stack buffer of this size.
    max_len: usize,
}

/// Longest wanted name whose escaped spelling in a key can still be matched (stack buffer size).
const MAX_ESCAPED_NAME: usize = 128;

impl FieldSet {
    pub fn new(names: &[&str]) -> FieldSet {
        let names: Vec<Box<str>> = names.iter().map(|n| Box::from(*n)).collect();
        let max_len = names.iter().map(|n| n.len()).max().unwrap_or(0);
        let heads = names
            .iter()
            .map(|n| (n.len(), head_word(n.as_bytes())))
            .collect();
        FieldSet {
            names,
            heads,
            max_len,
        }
    }
    pub fn len(&self) -> usize {
        self.names.len()
    }
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
    pub fn name(&self, slot: usize) -> Option<&str> {
        self.names.get(slot).map(|n| &**n)
    }
    /// Slot of the unescaped key `line[start..end]`. Reads the head word straight from the line
    /// when 8 bytes are there (the key is followed by at least `":` and a value).
    #[inline(always)]
    pub(super) fn slot_in(&self, line: &[u8], start: usize, end: usize) -> Option<usize> {
        let len = end - start;
        let head = match line.get(start..start + 8) {
            Some(w) if len < 8 => load8(w) & ((1u64 << (8 * len)) - 1),
            Some(w) => load8(w),
            None => head_word(&line[start..end]),
        };
        for (i, &(n, h)) in self.heads.iter().enumerate() {
            if n == len
                && h == head
                && (len <= 8 || self.names[i].as_bytes()[8..] == line[start + 8..end])
            {
                return Some(i);
            }
        }
        None
    }
    fn slot(&self, key: &[u8]) -> Option<usize> {
        self.slot_in(key, 0, key.len())
    }
    /// Slot of a key whose raw content has escapes; `None` if no wanted name can equal it.
    #[cold]
    pub(super) fn slot_escaped(&self, content: &[u8]) -> Result<Option<usize>, JsonError> {
        let mut buf = [0u8; MAX_ESCAPED_NAME];
        let cap = self.max_len.min(MAX_ESCAPED_NAME);
        let mut len = 0;
        let fits = unescape_to(content, &mut |b: &[u8]| {
            if len + b.len() > cap {
                return false;
            }
            buf[len..len + b.len()].copy_from_slice(b);
            len += b.len();
            true
        })?;
        Ok(if fits { self.slot(&buf[..len]) } else { None })
    }
}
