//! The key shape of the last line a parser scanned: most NDJSON producers write every record's
//! keys in the same order and spelling, so [`super::extract_shaped`] first compares the bytes at
//! a key's place with the key found at the same place in the previous line (`"ad_id":`, quotes
//! and colon included) and, when they are equal, takes that key's slot without scanning the
//! string or looking the name up. Any difference falls back to the full scan, which learns the
//! new key for the next line.
//!
//! Must stay true: a match means the line holds exactly the bytes of a key that the full scan
//! accepted (no escape, no control or non-ASCII byte, the colon right after the closing quote),
//! so the string ends where the pattern's quote is and the slot is the one the full scan would
//! find: the result and the errors are those of [`super::extract`] on every line.

use super::swar::load8;

/// Keys remembered per line; later keys always take the full scan.
const MAX_KEYS: usize = 16;
/// Longest pattern (`"name":`) kept: two words.
const MAX_PATTERN: usize = 16;

#[derive(Clone, Copy, Debug)]
struct Key {
    pat: [u8; MAX_PATTERN],
    lo: u64,
    hi: u64,
    mask_lo: u64,
    mask_hi: u64,
    len: usize,
    slot: Option<usize>,
}

/// One parser's memory of its last line's keys (belongs with one [`super::FieldSet`]: reset it
/// when the set changes, since the slots are that set's).
#[derive(Clone, Debug, Default)]
pub struct KeyShape {
    keys: Vec<Key>,
}

impl KeyShape {
    pub fn new() -> KeyShape {
        KeyShape {
            keys: Vec::with_capacity(MAX_KEYS),
        }
    }

    /// Forgets every key (the field set it belonged to changed).
    pub fn reset(&mut self) {
        self.keys.clear();
    }

    /// When `line[at..]` starts with the `k`-th key of the last line: that key's slot and the
    /// length of its pattern (the index after the colon is `at + len`).
    #[inline(always)]
    pub(super) fn matches(
        &self,
        line: &[u8],
        at: usize,
        k: usize,
    ) -> Option<(Option<usize>, usize)> {
        let key = self.keys.get(k)?;
        let same = match line.get(at..at + MAX_PATTERN) {
            Some(w) => {
                let (lo, hi) = (load8(&w[..8]), load8(&w[8..]));
                lo & key.mask_lo == key.lo && hi & key.mask_hi == key.hi
            }
            // The last few bytes of a line: compare the pattern itself.
            None => line.get(at..at + key.len) == Some(&key.pat[..key.len]),
        };
        same.then_some((key.slot, key.len))
    }

    /// Remembers `line[at..colon + 1]` (a key the full scan accepted, `colon` the index of its
    /// colon) as the `k`-th key, filling `slot`, when it is plain and short enough to match.
    #[inline]
    pub(super) fn learn(
        &mut self,
        line: &[u8],
        at: usize,
        colon: usize,
        k: usize,
        slot: Option<usize>,
    ) {
        let len = colon + 1 - at;
        if k > self.keys.len() || k >= MAX_KEYS || len > MAX_PATTERN {
            return;
        }
        let mut pat = [0u8; MAX_PATTERN];
        pat[..len].copy_from_slice(&line[at..colon + 1]);
        let mask = |n: usize| {
            if n >= 8 {
                u64::MAX
            } else {
                (1u64 << (8 * n)) - 1
            }
        };
        let key = Key {
            pat,
            lo: load8(&pat[..8]),
            hi: load8(&pat[8..]),
            mask_lo: mask(len),
            mask_hi: mask(len.saturating_sub(8)),
            len,
            slot,
        };
        if k == self.keys.len() {
            self.keys.push(key);
        } else {
            self.keys[k] = key;
        }
    }
}
