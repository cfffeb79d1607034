//! NDJSON field projection: one strict, allocation-free pass over a line that validates the whole
//! object and hands back only the top-level fields a pipeline uses, as borrowed [`Token`]s.
//!
//! Why not serde_json: a click line is ~70 bytes and the engine must parse well over 300 MB/s per
//! core. serde_json (even into a borrowed struct) builds values or visits every field through the
//! serde data model; here we only *locate* the wanted fields (a byte span each) and skip the rest
//! with a validating scanner, and numbers/strings are decoded later, only if used. serde_json stays
//! the reference in tests.
//!
//! Must stay true:
//! - Anything `serde_json::from_slice::<Value>` rejects is rejected here (same grammar: RFC 8259
//!   numbers, escapes incl. paired `\u` surrogates, no control characters, no trailing garbage,
//!   numbers that overflow f64 are out of range). We are stricter in three ways: the line must be
//!   an object, nesting deeper than [`MAX_DEPTH`] is rejected, and a *wanted* field that appears
//!   twice is an error (which one would be meant is ambiguous); unwanted duplicates are fine.
//! - Invalid UTF-8 inside strings is rejected (as serde_json does). It costs nothing on ASCII input:
//!   the 8-byte SWAR scan that finds quotes, backslashes and control characters also flags any
//!   byte of 0x80 or above, and only then is one UTF-8 sequence checked.
//!   Strings are scanned 8 bytes at a time with portable SWAR bit tricks rather than memchr: they
//!   are short (a few bytes) and four byte classes must be found in one pass; memchr is used where
//!   one byte is sought in longer text (backslashes when unescaping).
//! - Range check caveat: "overflows f64" uses Rust's correctly rounded parse; serde_json's default
//!   (non-`float_roundtrip`) parse can differ by an ulp right at f64::MAX, so a literal within an
//!   ulp of 1.8e308 might be judged differently. Irrelevant to real input.
//! - The hot path never allocates: only [`unescape`]/[`canonical`] of strings with escapes do.
//! - Error positions (`at`) are 0-based byte offsets into the line (a line's column).

use memchr::memchr;
use std::borrow::Cow;
use thiserror::Error;

/// Deepest nesting accepted; the line's own object is depth 1.
pub const MAX_DEPTH: usize = 64;

/// Why a line was rejected, and at which byte (0-based) of the line.
#[derive(Debug, Error, PartialEq, Eq, Clone, Copy)]
pub enum JsonError {
    #[error("empty line")]
    Empty,
    #[error("line is not a JSON object: expected '{{' at byte {at}")]
    NotAnObject { at: usize },
    #[error("line ends inside a value at byte {at}")]
    Truncated { at: usize },
    #[error("expected {expected} at byte {at}")]
    Expected { expected: &'static str, at: usize },
    #[error("invalid number at byte {at}")]
    InvalidNumber { at: usize },
    #[error("number out of range (overflows f64) at byte {at}")]
    NumberOutOfRange { at: usize },
    #[error("invalid literal (expected true, false or null) at byte {at}")]
    InvalidLiteral { at: usize },
    #[error("invalid escape sequence in string at byte {at}")]
    InvalidEscape { at: usize },
    #[error("unpaired UTF-16 surrogate in \\u escape at byte {at}")]
    LoneSurrogate { at: usize },
    #[error("unescaped control character in string at byte {at}")]
    ControlCharacter { at: usize },
    #[error("invalid UTF-8 in string at byte {at}")]
    InvalidUtf8 { at: usize },
    #[error("nesting deeper than {MAX_DEPTH} at byte {at}")]
    TooDeep { at: usize },
    #[error("wanted field appears twice, second key at byte {at}")]
    DuplicateField { at: usize },
    #[error("trailing characters after the object at byte {at}")]
    TrailingCharacters { at: usize },
}

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
    fn slot_in(&self, line: &[u8], start: usize, end: usize) -> Option<usize> {
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
    fn slot_escaped(&self, content: &[u8]) -> Result<Option<usize>, JsonError> {
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    String,
    Number,
    True,
    False,
    Null,
    Object,
    Array,
}

/// One field's value as it appears in the line.
#[derive(Clone, Copy, Debug)]
pub struct Token<'a> {
    pub kind: TokenKind,
    /// The whole token, quotes included for strings, brackets for objects and arrays.
    pub raw: &'a [u8],
    /// Some string in the token (the token itself, or one nested in it) contains a `\` escape.
    pub has_escape: bool,
}

/// Scans one line (one JSON object, surrounding whitespace allowed, a trailing '\r' allowed).
/// `out[i]` receives the token of field `i` of `fields`, or None if absent; `out` should have
/// `fields.len()` slots (slots beyond `out` are ignored). Validates the whole line; see the module
/// doc for exactly what is accepted.
pub fn extract<'a>(
    line: &'a [u8],
    fields: &FieldSet,
    out: &mut [Option<Token<'a>>],
) -> Result<(), JsonError> {
    debug_assert!(
        out.len() >= fields.len(),
        "one output slot per wanted field"
    );
    out.iter_mut().for_each(|o| *o = None);
    let mut s = Scan { b: line, i: 0 };
    s.ws();
    match s.peek() {
        None => return Err(JsonError::Empty),
        Some(b'{') => s.i += 1,
        Some(_) => return Err(JsonError::NotAnObject { at: s.i }),
    }
    s.ws();
    if s.peek() == Some(b'}') {
        s.i += 1;
    } else {
        loop {
            let key_at = s.i;
            if s.peek() != Some(b'"') {
                return Err(s.expected("a string key"));
            }
            let key_escaped = s.string()?;
            let key_end = s.i - 1;
            s.ws();
            if s.peek() != Some(b':') {
                return Err(s.expected("':'"));
            }
            s.i += 1;
            s.ws();
            let start = s.i;
            let (kind, has_escape) = s.value(2)?;
            let slot = if key_escaped {
                fields.slot_escaped(&line[key_at + 1..key_end])?
            } else {
                fields.slot_in(line, key_at + 1, key_end)
            };
            if let Some(o) = slot.and_then(|k| out.get_mut(k)) {
                if o.is_some() {
                    return Err(JsonError::DuplicateField { at: key_at });
                }
                let raw = &line[start..s.i];
                *o = Some(Token {
                    kind,
                    raw,
                    has_escape,
                });
            }
            s.ws();
            match s.peek() {
                Some(b',') => {
                    s.i += 1;
                    s.ws();
                }
                Some(b'}') => {
                    s.i += 1;
                    break;
                }
                _ => return Err(s.expected("',' or '}'")),
            }
        }
    }
    s.ws();
    if s.i != line.len() {
        return Err(JsonError::TrailingCharacters { at: s.i });
    }
    Ok(())
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// High bit set in every byte of `v` that is zero; exact for the lowest such byte (a borrow only
/// propagates upward from a byte that really was zero).
#[inline(always)]
fn zero_bytes(v: u64) -> u64 {
    v.wrapping_sub(ONES) & !v & HIGH
}

#[inline(always)]
fn load8(w: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(w);
    u64::from_le_bytes(b)
}

/// First <= 8 bytes of `s` as a little-endian word, zero-padded.
fn head_word(s: &[u8]) -> u64 {
    s.iter()
        .take(8)
        .enumerate()
        .fold(0, |w, (k, &c)| w | u64::from(c) << (8 * k))
}

/// Per byte of `w`: nonzero iff that byte is not an ASCII digit. Exact up to the first non-digit
/// (the `+ 0x06` can only carry out of a byte >= 0xFA, itself a non-digit).
#[inline(always)]
fn non_digits(w: u64) -> u64 {
    const F0: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    ((w & F0) ^ (ONES * 0x30)) | ((w.wrapping_add(ONES * 0x06) & F0) ^ (ONES * 0x30))
}

/// Index after the run of ASCII digits starting at `i`.
#[inline(always)]
fn digits_end(b: &[u8], mut i: usize) -> usize {
    while let Some(w) = b.get(i..i + 8) {
        let x = non_digits(load8(w));
        if x != 0 {
            // High bit of every nonzero byte; no carry crosses bytes (0x7F + 0x7F < 0x100).
            let nz = ((x & !HIGH).wrapping_add(!HIGH & (ONES * 0x7F)) | x) & HIGH;
            return i + (nz.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(b'0'..=b'9') = b.get(i) {
        i += 1;
    }
    i
}

/// Value of 8 ASCII digits loaded little-endian (first digit in the low byte); the SWAR
/// reduction from simdjson's `parse_eight_digits_unrolled`.
#[inline(always)]
fn parse8(w: u64) -> u64 {
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    let v = w.wrapping_sub(ONES * 0x30);
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    (v & MASK)
        .wrapping_mul(MUL1)
        .wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2))
        >> 32
}

/// Index of the first byte at or after `i` that ends a plain run inside a string: `"`, `\`, a
/// control character (< 0x20) or a non-ASCII byte; `b.len()` if none.
#[inline(always)]
fn next_special(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let w = load8(chunk);
        let m = zero_bytes(w ^ (ONES * b'"' as u64))
            | zero_bytes(w ^ (ONES * b'\\' as u64))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
            | (w & HIGH);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || !(0x20..0x80).contains(&c) {
            return i;
        }
        i += 1;
    }
    b.len()
}

/// Cursor over one line. Invariant: `i <= b.len()`.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    #[inline(always)]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }
    /// The error for "wanted `what` here": truncation if the line ended.
    #[cold]
    fn expected(&self, expected: &'static str) -> JsonError {
        if self.i >= self.b.len() {
            JsonError::Truncated { at: self.b.len() }
        } else {
            JsonError::Expected {
                expected,
                at: self.i,
            }
        }
    }

    /// At a `"`: moves past the closing quote; returns whether the string had escapes.
    #[inline(always)]
    fn string(&mut self) -> Result<bool, JsonError> {
        let b = self.b;
        let mut i = self.i + 1;
        let mut escaped = false;
        loop {
            i = next_special(b, i);
            match b.get(i) {
                Some(b'"') => {
                    self.i = i + 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    escaped = true;
                    i = decode_escape(b, i)?.1;
                }
                Some(&c) if c < 0x20 => return Err(JsonError::ControlCharacter { at: i }),
                Some(_) => i = utf8_sequence(b, i)?,
                None => return Err(JsonError::Truncated { at: b.len() }),
            }
        }
    }

    /// At the first byte of a number: moves past it, validating RFC 8259 grammar and f64 range.
    #[inline(always)]
    fn number(&mut self) -> Result<(), JsonError> {
        let b = self.b;
        let start = self.i;
        let mut i = start + usize::from(b.get(start) == Some(&b'-'));
        let int_start = i;
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits_end(b, i + 1),
            _ => return Err(JsonError::InvalidNumber { at: i }),
        }
        let int_digits = i - int_start;
        if b.get(i) == Some(&b'.') {
            i = digits1(b, i + 1)?;
        }
        let has_exp = matches!(b.get(i), Some(b'e' | b'E'));
        if has_exp {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            i = digits1(b, i)?;
        }
        // Nothing of a number may follow a complete one (`01`, `1.2.3`, `1e5e5`).
        if let Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') = b.get(i) {
            return Err(JsonError::InvalidNumber { at: i });
        }
        // Only an exponent or > 300 integer digits can overflow f64 (serde_json rejects that).
        if has_exp || int_digits > 300 {
            let finite = std::str::from_utf8(&b[start..i])
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(f64::is_finite);
            if !finite {
                return Err(JsonError::NumberOutOfRange { at: start });
            }
        }
        self.i = i;
        Ok(())
    }

    fn literal(&mut self, lit: &[u8]) -> Result<(), JsonError> {
        if !self.b[self.i..].starts_with(lit) {
            return Err(JsonError::InvalidLiteral { at: self.i });
        }
        self.i += lit.len();
        Ok(())
    }

    /// At the first byte of a value at nesting `depth`: moves past it (validated).
    #[inline(always)]
    fn value(&mut self, depth: usize) -> Result<(TokenKind, bool), JsonError> {
        Ok(match self.peek() {
            Some(b'"') => (TokenKind::String, self.string()?),
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
                (TokenKind::Number, false)
            }
            Some(b't') => {
                self.literal(b"true")?;
                (TokenKind::True, false)
            }
            Some(b'f') => {
                self.literal(b"false")?;
                (TokenKind::False, false)
            }
            Some(b'n') => {
                self.literal(b"null")?;
                (TokenKind::Null, false)
            }
            Some(b'{') => (TokenKind::Object, self.compound(depth)?),
            Some(b'[') => (TokenKind::Array, self.compound(depth)?),
            _ => return Err(self.expected("a value")),
        })
    }

    /// At `{` or `[` opening nesting level `depth`: skips the whole (validated) value without
    /// recursion. `kinds` is a stack of one bit per open container (1 = object); depth <= 64
    /// means it fits a u64. Returns whether any string inside had escapes.
    #[cold]
    fn compound(&mut self, depth: usize) -> Result<bool, JsonError> {
        let mut kinds: u64 = 0;
        let mut open = 0usize;
        let mut escaped = false;
        loop {
            // Here: at an element's first byte, or at an opening bracket to enter.
            if let Some(c @ (b'{' | b'[')) = self.peek() {
                if depth + open > MAX_DEPTH {
                    return Err(JsonError::TooDeep { at: self.i });
                }
                kinds = (kinds << 1) | u64::from(c == b'{');
                open += 1;
                self.i += 1;
                self.ws();
                let close = if c == b'{' { b'}' } else { b']' };
                if self.peek() == Some(close) {
                    self.i += 1;
                    kinds >>= 1;
                    open -= 1;
                } else {
                    if kinds & 1 == 1 {
                        escaped |= self.key()?;
                    }
                    continue;
                }
            } else {
                escaped |= self.value(MAX_DEPTH)?.1; // a scalar here: never recurses
            }
            // After a complete value: close containers or move to the next element.
            loop {
                if open == 0 {
                    return Ok(escaped);
                }
                self.ws();
                let is_obj = kinds & 1 == 1;
                match self.peek() {
                    Some(b',') => {
                        self.i += 1;
                        self.ws();
                        if is_obj {
                            escaped |= self.key()?;
                        }
                        break;
                    }
                    Some(b'}') if is_obj => {}
                    Some(b']') if !is_obj => {}
                    _ if is_obj => return Err(self.expected("',' or '}'")),
                    _ => return Err(self.expected("',' or ']'")),
                }
                self.i += 1;
                kinds >>= 1;
                open -= 1;
            }
        }
    }

    /// Inside an object at a key: moves past `"key" :` and following whitespace.
    fn key(&mut self) -> Result<bool, JsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.expected("a string key"));
        }
        let escaped = self.string()?;
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.expected("':'"));
        }
        self.i += 1;
        self.ws();
        Ok(escaped)
    }
}

/// At least one digit from `i`; returns the index after the digits.
#[inline(always)]
fn digits1(b: &[u8], mut i: usize) -> Result<usize, JsonError> {
    let start = i;
    while let Some(b'0'..=b'9') = b.get(i) {
        i += 1;
    }
    if i == start {
        return Err(JsonError::InvalidNumber { at: i });
    }
    Ok(i)
}

/// Validates the UTF-8 sequence starting at non-ASCII `b[i]` (std's rules: no overlongs, no
/// surrogates, <= U+10FFFF); returns the index after it.
fn utf8_sequence(b: &[u8], i: usize) -> Result<usize, JsonError> {
    let (len, lo, hi) = match b[i] {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        0xF4 => (4, 0x80, 0x8F),
        _ => return Err(JsonError::InvalidUtf8 { at: i }),
    };
    let bad = JsonError::InvalidUtf8 { at: i };
    match b.get(i + 1) {
        Some(&c) if (lo..=hi).contains(&c) => {}
        _ => return Err(bad),
    }
    for k in 2..len {
        match b.get(i + k) {
            Some(0x80..=0xBF) => {}
            _ => return Err(bad),
        }
    }
    Ok(i + len)
}

fn hex4(b: &[u8], i: usize) -> Result<u32, JsonError> {
    let digits = b.get(i..i + 4).ok_or(JsonError::InvalidEscape { at: i })?;
    let mut n = 0;
    for (k, &c) in digits.iter().enumerate() {
        let d = (c as char)
            .to_digit(16)
            .ok_or(JsonError::InvalidEscape { at: i + k })?;
        n = n * 16 + d;
    }
    Ok(n)
}

/// Decodes the escape at `b[i] == b'\\'` (surrogates must pair, as serde_json requires for
/// strings); returns the character and the index after the escape.
fn decode_escape(b: &[u8], i: usize) -> Result<(char, usize), JsonError> {
    let c = match b.get(i + 1) {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\x08',
        Some(b'f') => '\x0c',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => {
            let n = hex4(b, i + 2)?;
            let lone = JsonError::LoneSurrogate { at: i };
            let (code, next) = match n {
                0xDC00..=0xDFFF => return Err(lone),
                0xD800..=0xDBFF => {
                    if b.get(i + 6) != Some(&b'\\') || b.get(i + 7) != Some(&b'u') {
                        return Err(lone);
                    }
                    let n2 = hex4(b, i + 8)?;
                    if !(0xDC00..=0xDFFF).contains(&n2) {
                        return Err(lone);
                    }
                    (0x1_0000 + ((n - 0xD800) << 10) + (n2 - 0xDC00), i + 12)
                }
                _ => (n, i + 6),
            };
            return char::from_u32(code).map(|c| (c, next)).ok_or(lone);
        }
        Some(_) => return Err(JsonError::InvalidEscape { at: i }),
        None => return Err(JsonError::Truncated { at: b.len() }),
    };
    Ok((c, i + 2))
}

/// Feeds the unescaped bytes of string content `content` (no quotes) to `emit` in runs; stops
/// early and returns Ok(false) when `emit` does. Does not check for control characters or UTF-8.
fn unescape_to(content: &[u8], emit: &mut impl FnMut(&[u8]) -> bool) -> Result<bool, JsonError> {
    let mut i = 0;
    while let Some(off) = memchr(b'\\', &content[i..]) {
        let (c, next) = decode_escape(content, i + off)?;
        let mut utf8 = [0u8; 4];
        if !emit(&content[i..i + off]) || !emit(c.encode_utf8(&mut utf8).as_bytes()) {
            return Ok(false);
        }
        i = next;
    }
    Ok(emit(&content[i..]))
}

/// A decoded JSON number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    Float(f64),
}

/// JSON number token -> Int if it is an integer literal that fits i64 (no '.', 'e'), else Float.
#[inline]
pub fn parse_number(raw: &[u8]) -> Result<Number, JsonError> {
    let neg = raw.first() == Some(&b'-');
    match small_int(&raw[usize::from(neg)..]) {
        Some(v) => Ok(Number::Int(if neg { -v } else { v })),
        None => parse_number_slow(raw),
    }
}

#[inline(never)]
fn parse_number_slow(raw: &[u8]) -> Result<Number, JsonError> {
    let neg = raw.first() == Some(&b'-');
    let digits = &raw[usize::from(neg)..];
    let mut s = Scan { b: raw, i: 0 };
    s.number()?;
    if s.i != raw.len() {
        return Err(JsonError::InvalidNumber { at: s.i });
    }
    if digits.iter().all(u8::is_ascii_digit) {
        // Accumulate negatively so i64::MIN fits; overflow falls through to Float.
        let acc = digits.iter().try_fold(0i64, |v, &d| {
            v.checked_mul(10)?.checked_sub(i64::from(d - b'0'))
        });
        if let Some(v) = acc.and_then(|v| if neg { Some(v) } else { v.checked_neg() }) {
            return Ok(Number::Int(v));
        }
    }
    // The grammar check above guarantees ASCII and a finite f64.
    std::str::from_utf8(raw)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .map(Number::Float)
        .ok_or(JsonError::InvalidNumber { at: 0 })
}

/// Fast path of [`parse_number`]: 1..=18 digits (cannot overflow i64), no leading zero.
#[inline(always)]
fn small_int(digits: &[u8]) -> Option<i64> {
    let n = digits.len();
    if !(1..=18).contains(&n) || (digits[0] == b'0' && n > 1) {
        return None;
    }
    let (mut v, mut k) = (0u64, 0);
    while let Some(w) = digits.get(k..k + 8) {
        let w = load8(w);
        if non_digits(w) != 0 {
            return None;
        }
        v = v * 100_000_000 + parse8(w);
        k += 8;
    }
    for &c in &digits[k..] {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    // < 10^18 < i64::MAX, so the cast is exact.
    Some(v as i64)
}

/// The string's content unescaped (Cow: borrowed when it has no escapes); input is the raw token
/// with quotes, fully validated as a JSON string.
pub fn unescape(raw: &[u8]) -> Result<Cow<'_, str>, JsonError> {
    if raw.first() != Some(&b'"') {
        return Err(JsonError::Expected {
            expected: "a string",
            at: 0,
        });
    }
    let mut s = Scan { b: raw, i: 0 };
    let escaped = s.string()?;
    if s.i != raw.len() {
        return Err(JsonError::TrailingCharacters { at: s.i });
    }
    let content = &raw[1..raw.len() - 1];
    let utf8_err = |e: std::str::Utf8Error| JsonError::InvalidUtf8 {
        at: 1 + e.valid_up_to(),
    };
    if !escaped {
        return std::str::from_utf8(content)
            .map(Cow::Borrowed)
            .map_err(utf8_err);
    }
    let mut v = Vec::with_capacity(content.len());
    unescape_to(content, &mut |b: &[u8]| {
        v.extend_from_slice(b);
        true
    })?;
    String::from_utf8(v)
        .map(Cow::Owned)
        .map_err(|e| utf8_err(e.utf8_error()))
}

/// Canonical bytes of a token for use as a group-by key / distinct value: for strings without
/// escapes, the raw token; for strings with escapes, the string re-encoded minimally (serde_json's
/// encoding) so "\u0061" and "a" are the same key; numbers, literals, objects and arrays: the raw
/// token (so `1`, `1.0` and `1e0` are different keys). Writes into `buf`, returns the slice.
pub fn canonical<'b>(tok: &Token<'_>, buf: &'b mut Vec<u8>) -> Result<&'b [u8], JsonError> {
    buf.clear();
    if tok.kind != TokenKind::String || !tok.has_escape {
        buf.extend_from_slice(tok.raw);
        return Ok(buf);
    }
    let s = unescape(tok.raw)?;
    buf.push(b'"');
    for &c in s.as_bytes() {
        match c {
            b'"' => buf.extend_from_slice(b"\\\""),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            0x08 => buf.extend_from_slice(b"\\b"),
            0x09 => buf.extend_from_slice(b"\\t"),
            0x0A => buf.extend_from_slice(b"\\n"),
            0x0C => buf.extend_from_slice(b"\\f"),
            0x0D => buf.extend_from_slice(b"\\r"),
            0x00..=0x1F => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let esc = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(c >> 4)],
                    HEX[usize::from(c & 15)],
                ];
                buf.extend_from_slice(&esc);
            }
            _ => buf.push(c),
        }
    }
    buf.push(b'"');
    Ok(buf)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// RFC 3339 timestamp (the string's content, no quotes), e.g. `2023-11-14T22:13:20.123Z` or with
/// a `+02:00` offset, fraction of 1..=9 digits optional, to epoch milliseconds (fraction truncated
/// toward -inf). Accepts `t`/space for `T` and `z` for `Z`; second 60 (a leap second) counts as the
/// first second of the next minute. Years 0000..=9999 only. None if malformed or out of range.
pub fn parse_rfc3339_ms(s: &[u8]) -> Option<i64> {
    let num = |at: usize, n: usize| -> Option<i64> {
        s.get(at..at + n)?.iter().try_fold(0i64, |v, &c| {
            c.is_ascii_digit().then(|| v * 10 + i64::from(c - b'0'))
        })
    };
    let sep = |at: usize, ok: &[u8]| s.get(at).is_some_and(|c| ok.contains(c));
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, min, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let mut i = 19;
    let mut nanos = 0i64;
    if s.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while let Some(c) = s.get(i).filter(|c| c.is_ascii_digit()) {
            nanos = nanos * 10 + i64::from(c - b'0');
            i += 1;
            if i - start > 9 {
                return None;
            }
        }
        if i == start {
            return None;
        }
        nanos *= 10i64.pow((9 - (i - start)) as u32);
    }
    let offset_min = match *s.get(i)? {
        b'Z' | b'z' => {
            i += 1;
            0
        }
        c @ (b'+' | b'-') => {
            let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if !sep(i + 3, b":") || oh > 23 || om > 59 {
                return None;
            }
            i += 6;
            if c == b'-' {
                -(oh * 60 + om)
            } else {
                oh * 60 + om
            }
        }
        _ => return None,
    };
    let valid = i == s.len()
        && (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour <= 23
        && min <= 59
        && sec <= 60;
    if !valid {
        return None;
    }
    let secs =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec - offset_min * 60;
    // nanos >= 0, so integer division floors the whole value toward -inf.
    Some(secs * 1000 + nanos / 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    fn run<'a>(line: &'a [u8], names: &[&str]) -> Result<Vec<Option<Token<'a>>>, JsonError> {
        let fs = FieldSet::new(names);
        let mut out = vec![None; fs.len()];
        extract(line, &fs, &mut out).map(|()| out)
    }
    fn raw<'a>(t: &Option<Token<'a>>) -> Option<&'a str> {
        t.map(|t| std::str::from_utf8(t.raw).unwrap())
    }

    #[test]
    fn click_line_fields_and_values() {
        let line = br#"{"ad_id":"ad-123","user_id":"u-456","ts":1700000000123,"bid":250}"#;
        let out = run(line, &["ts", "ad_id", "bid", "user_id", "absent"]).unwrap();
        let got: Vec<_> = out.iter().map(raw).collect();
        let want = [
            Some("1700000000123"),
            Some(r#""ad-123""#),
            Some("250"),
            Some(r#""u-456""#),
            None,
        ];
        assert_eq!(got, want);
        let ts = out[0].unwrap();
        assert_eq!((ts.kind, ts.has_escape), (TokenKind::Number, false));
        assert_eq!(parse_number(ts.raw), Ok(Number::Int(1_700_000_000_123)));
        assert!(matches!(
            unescape(out[1].unwrap().raw),
            Ok(Cow::Borrowed("ad-123"))
        ));
    }

    #[test]
    fn whitespace_cr_nesting_and_escaped_keys() {
        let line = b" {\"x\" : [ 1 , {\"a\":[]} ] ,\t\"a\\u0064\":null, \"a\\\"b\": {\"q\":{}} }\r";
        let out = run(line, &["ad", "x", "a\"b", "zz"]).unwrap();
        let got: Vec<_> = out.iter().map(raw).collect();
        assert_eq!(
            got,
            [
                Some("null"),
                Some(r#"[ 1 , {"a":[]} ]"#),
                Some(r#"{"q":{}}"#),
                None
            ]
        );
        assert_eq!(out[1].unwrap().kind, TokenKind::Array);
        assert_eq!(out[2].unwrap().kind, TokenKind::Object);
        let lits = run(
            br#"{"t":true,"f":false,"e":{},"s":"\ud83d\ude00 \u00e9 \/"}"#,
            &["t", "f", "e", "s"],
        );
        let kinds: Vec<_> = lits.unwrap().iter().map(|t| t.unwrap().kind).collect();
        let want = [
            TokenKind::True,
            TokenKind::False,
            TokenKind::Object,
            TokenKind::String,
        ];
        assert_eq!(kinds, want);
        assert_eq!(run(b"{}", &["a"]).unwrap()[0].map(|t| t.kind), None);
    }

    #[test]
    fn malformed_lines_rejected_where_serde_rejects() {
        use JsonError::*;
        let exp = |expected, at| Expected { expected, at };
        let cases: &[(&[u8], JsonError)] = &[
            (b"", Empty),
            (b" \r", Empty),
            (b"{", Truncated { at: 1 }),
            (br#"{"a":1,}"#, exp("a string key", 7)),
            (br#"{"a":01}"#, InvalidNumber { at: 6 }),
            (br#"{"a":1.}"#, InvalidNumber { at: 7 }),
            (br#"{"a":-}"#, InvalidNumber { at: 6 }),
            (br#"{"a":1e}"#, InvalidNumber { at: 7 }),
            (br#"{"a":+1}"#, exp("a value", 5)),
            (br#"{"a":1e400}"#, NumberOutOfRange { at: 5 }),
            (br#"{"a":tru}"#, InvalidLiteral { at: 5 }),
            (br#"{"a":nul"#, InvalidLiteral { at: 5 }),
            (br#"{"a":"\x"}"#, InvalidEscape { at: 6 }),
            (br#"{"a":"\u12G4"}"#, InvalidEscape { at: 10 }),
            (br#"{"a":"\ud800"}"#, LoneSurrogate { at: 6 }),
            (br#"{"a":"\udc00"}"#, LoneSurrogate { at: 6 }),
            (br#"{"a":"\ud800\u0041"}"#, LoneSurrogate { at: 6 }),
            (b"{\"a\":\"b\x01\"}", ControlCharacter { at: 7 }),
            (b"{\"a\":\"\xff\"}", InvalidUtf8 { at: 6 }),
            (b"{\"a\":\"\xc0\xaf\"}", InvalidUtf8 { at: 6 }),
            (b"{\"a\":\"\xed\xa0\x80\"}", InvalidUtf8 { at: 6 }),
            (b"{\"a\":\"\xe2\x82\"}", InvalidUtf8 { at: 6 }),
            (b"{\"\xf4\x90\x80\x80\":1}", InvalidUtf8 { at: 2 }),
            (br#"[1,2]"#, NotAnObject { at: 0 }),
            (br#"{"a":1} x"#, TrailingCharacters { at: 8 }),
            (br#"{"a":1}}"#, TrailingCharacters { at: 7 }),
            (br#"{"a" 1}"#, exp("':'", 5)),
            (br#"{"a":1 "b":2}"#, exp("',' or '}'", 7)),
            (br#"{1:2}"#, exp("a string key", 1)),
            (br#"{"a":[1,2}"#, exp("',' or ']'", 9)),
            (br#"{"a":{"b":1]}"#, exp("',' or '}'", 11)),
            (br#"{"a":{"b"}}"#, exp("':'", 9)),
            (br#"{"a":[1,]}"#, exp("a value", 8)),
            (br#"{"a":"abc"#, Truncated { at: 9 }),
            (br#"{"a":[{"#, Truncated { at: 7 }),
        ];
        for (line, err) in cases {
            let shown = String::from_utf8_lossy(line);
            assert_eq!(run(line, &["a"]).err(), Some(*err), "line {shown}");
            let serde = serde_json::from_slice::<Map<String, Value>>(line);
            assert!(serde.is_err(), "serde accepts {shown}");
        }
    }

    #[test]
    fn duplicate_wanted_field_is_an_error_unwanted_is_fine() {
        let dup = JsonError::DuplicateField { at: 7 };
        assert_eq!(run(br#"{"a":1,"a":2}"#, &["a"]).err(), Some(dup));
        assert_eq!(run(br#"{"a":1,"\u0061":2}"#, &["a"]).err(), Some(dup));
        let out = run(br#"{"a":1,"b":2,"b":3}"#, &["a"]).unwrap();
        assert_eq!(raw(&out[0]), Some("1"));
    }

    #[test]
    fn depth_limit_is_64_including_the_line_object() {
        let nest = |n: usize| format!("{{\"a\":{}1{}}}", "[".repeat(n), "]".repeat(n));
        assert!(run(nest(MAX_DEPTH - 1).as_bytes(), &["a"]).is_ok());
        let too_deep = JsonError::TooDeep {
            at: 5 + MAX_DEPTH - 1,
        };
        assert_eq!(run(nest(MAX_DEPTH).as_bytes(), &[]).err(), Some(too_deep));
        let objs = |n: usize| format!("{{{}}}", "\"k\":{".repeat(n) + &"}".repeat(n));
        assert!(run(objs(MAX_DEPTH - 1).as_bytes(), &["k"]).is_ok());
        assert!(matches!(
            run(objs(MAX_DEPTH).as_bytes(), &[]),
            Err(JsonError::TooDeep { .. })
        ));
    }

    #[test]
    fn parse_number_cases() {
        use Number::*;
        let ok: &[(&str, Number)] = &[
            ("0", Int(0)),
            ("-0", Int(0)),
            ("250", Int(250)),
            ("123456789012345678", Int(123_456_789_012_345_678)),
            ("9223372036854775807", Int(i64::MAX)),
            ("-9223372036854775808", Int(i64::MIN)),
            ("9223372036854775808", Float(9_223_372_036_854_775_808.0)),
            ("1.5", Float(1.5)),
            ("1e3", Float(1000.0)),
            ("-2.5E-3", Float(-0.0025)),
            ("1e-400", Float(0.0)),
        ];
        for (s, n) in ok {
            assert_eq!(parse_number(s.as_bytes()), Ok(*n), "{s}");
        }
        for bad in [
            "", "01", "-01", "1.", "+1", ".5", "-", "1e", "1 ", "0x1", "1e400", "NaN",
        ] {
            assert!(parse_number(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn integer_fast_paths_every_length_and_neighbour_byte() {
        let all = "1987654320123456789";
        for n in 1..=all.len() {
            for neg in [false, true] {
                let text = format!("{}{}", if neg { "-" } else { "" }, &all[..n]);
                let want = text.parse::<i64>().unwrap();
                assert_eq!(
                    parse_number(text.as_bytes()),
                    Ok(Number::Int(want)),
                    "{text}"
                );
                // Digit runs end exactly at the first non-digit, whatever byte it is.
                for stop in [b':', b'/', b'}', b' ', 0xFA, 0xFF, 0x00] {
                    let mut line = text.clone().into_bytes();
                    line.push(stop);
                    line.extend_from_slice(b"12345678");
                    assert_eq!(
                        digits_end(&line, usize::from(neg)),
                        text.len(),
                        "{text} {stop}"
                    );
                }
            }
        }
        assert_eq!(parse8(u64::from_le_bytes(*b"01234567")), 1_234_567);
        assert_eq!(
            parse_number(b"1234567a"),
            Err(JsonError::InvalidNumber { at: 7 })
        );
    }

    #[test]
    fn unescape_and_canonical() {
        assert_eq!(
            unescape(br#""a\"\\\/\b\f\n\r\t""#).unwrap(),
            "a\"\\/\x08\x0c\n\r\t"
        );
        assert_eq!(unescape(br#""\ud83d\ude00\u00e9""#).unwrap(), "😀é");
        assert!(unescape(br#""a"b""#).is_err());
        assert!(unescape(br#""a\""#).is_err());
        assert!(unescape(b"abc").is_err());
        let cases: &[(&[u8], &[u8])] = &[
            (br#""\u0061""#, br#""a""#),
            (br#""a\/b""#, br#""a/b""#),
            (br#""\u001F\u0000\n\"\\""#, br#""\u001f\u0000\n\"\\""#),
            (br#""\u00e9\u007f""#, "\"é\x7f\"".as_bytes()),
        ];
        let mut buf = Vec::new();
        for (raw_tok, want) in cases {
            let tok = Token {
                kind: TokenKind::String,
                raw: raw_tok,
                has_escape: true,
            };
            assert_eq!(canonical(&tok, &mut buf).unwrap(), *want);
            let serde = serde_json::to_vec(&unescape(raw_tok).unwrap()).unwrap();
            assert_eq!(serde, *want);
        }
        let num = Token {
            kind: TokenKind::Number,
            raw: b"1.0",
            has_escape: false,
        };
        assert_eq!(canonical(&num, &mut buf).unwrap(), b"1.0");
    }

    #[test]
    fn rfc3339_known_values() {
        let cases: &[(&str, Option<i64>)] = &[
            ("1970-01-01T00:00:00Z", Some(0)),
            ("2023-11-14T22:13:20.123Z", Some(1_700_000_000_123)),
            ("2023-11-15T00:13:20.123+02:00", Some(1_700_000_000_123)),
            ("2023-11-14t16:43:20.1239-05:30", Some(1_700_000_000_123)),
            ("2000-02-29T00:00:00Z", Some(951_782_400_000)),
            ("2024-02-29 23:59:59z", Some(1_709_251_199_000)),
            ("1900-03-01T00:00:00Z", Some(-2_203_891_200_000)),
            ("1960-06-15T12:34:56Z", Some(-301_231_504_000)),
            ("1969-12-31T23:59:59.999Z", Some(-1)),
            ("1969-12-31T23:59:59.9995Z", Some(-1)),
            ("1969-12-31T23:59:59.000000001Z", Some(-1000)),
            ("0000-01-01T00:00:00Z", Some(-62_167_219_200_000)),
            ("9999-12-31T23:59:59.999999999Z", Some(253_402_300_799_999)),
            ("2016-12-31T23:59:60Z", Some(1_483_228_800_000)),
            ("1900-02-29T00:00:00Z", None),
            ("2100-02-29T00:00:00Z", None),
            ("2023-04-31T00:00:00Z", None),
            ("2023-13-01T00:00:00Z", None),
            ("2023-11-14T24:00:00Z", None),
            ("2023-11-14T22:13:20", None),
            ("2023-11-14T22:13:20.Z", None),
            ("2023-11-14T22:13:20.1234567891Z", None),
            ("2023-11-14T22:13:20+2:00", None),
            ("2023-11-14T22:13:20Z ", None),
            ("2023-11-14", None),
        ];
        for (s, want) in cases {
            assert_eq!(parse_rfc3339_ms(s.as_bytes()), *want, "{s}");
        }
    }

    // ---- property tests against serde_json and a naive calendar ----

    const KEYS: &[&str] = &[
        "a",
        "b",
        "ad_id",
        "ts",
        "a\"b",
        "é",
        "\u{1}",
        "k\\",
        "\u{1F600}",
    ];

    fn arb_key() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(KEYS).prop_map(String::from),
            "[a-c]{1,2}",
            any::<String>()
        ]
    }
    fn arb_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
                .map(Value::Number)),
            any::<String>().prop_map(Value::String),
            r#"[a-z\\"\x00-\x1f/é😀]{0,8}"#.prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((arb_key(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }
    fn arb_object() -> impl Strategy<Value = Map<String, Value>> {
        prop::collection::vec((arb_key(), arb_value()), 0..8)
            .prop_map(|kv| kv.into_iter().collect())
    }
    fn wanted(obj: &Map<String, Value>, fixed: Vec<&str>, pick: usize) -> Vec<String> {
        let mut w: Vec<String> = fixed.into_iter().map(String::from).collect();
        if let Some(k) = obj.keys().nth(pick % obj.len().max(1)) {
            if !w.contains(k) {
                w.push(k.clone());
            }
        }
        w
    }

    /// Every wanted field is found iff serde_json has it, and its token means the same value.
    fn check_tokens(
        map: &Map<String, Value>,
        names: &[String],
        out: &[Option<Token<'_>>],
    ) -> Result<(), TestCaseError> {
        for (name, tok) in names.iter().zip(out) {
            let (v, tok) = match (map.get(name), tok) {
                (None, None) => continue,
                (Some(v), Some(t)) => (v, t),
                (v, t) => return Err(TestCaseError::fail(format!("{name}: serde {v:?} vs {t:?}"))),
            };
            prop_assert_eq!(&serde_json::from_slice::<Value>(tok.raw).unwrap(), v);
            let kind = match v {
                Value::Null => TokenKind::Null,
                Value::Bool(true) => TokenKind::True,
                Value::Bool(false) => TokenKind::False,
                Value::Number(_) => TokenKind::Number,
                Value::String(_) => TokenKind::String,
                Value::Array(_) => TokenKind::Array,
                Value::Object(_) => TokenKind::Object,
            };
            prop_assert_eq!(tok.kind, kind);
            if let Value::String(s) = v {
                prop_assert_eq!(&unescape(tok.raw).unwrap(), s);
                let mut buf = Vec::new();
                prop_assert_eq!(
                    canonical(tok, &mut buf).unwrap(),
                    serde_json::to_vec(s).unwrap()
                );
            }
            if let Value::Number(n) = v {
                match parse_number(tok.raw).unwrap() {
                    Number::Int(i) => prop_assert_eq!(n.as_i64(), Some(i)),
                    Number::Float(f) => {
                        prop_assert!(n.as_i64().is_none());
                        let g = n.as_f64().unwrap();
                        prop_assert!((f - g).abs() <= g.abs() * 1e-15, "{} vs {}", f, g);
                    }
                }
            }
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn extract_agrees_with_serde_on_valid_objects(
            obj in arb_object(),
            fixed in prop::sample::subsequence(KEYS, 0..=KEYS.len()),
            pick in any::<usize>(),
            pretty in any::<bool>(),
        ) {
            let line = if pretty { serde_json::to_string_pretty(&obj) } else { serde_json::to_string(&obj) };
            let line = line.unwrap();
            let map: Map<String, Value> = serde_json::from_str(&line).unwrap();
            let names = wanted(&obj, fixed, pick);
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let out = run(line.as_bytes(), &refs);
            prop_assert!(out.is_ok(), "{:?} on {}", out.err(), line);
            check_tokens(&map, &names, &out.unwrap())?;
        }

        #[test]
        fn mutated_lines_accepted_only_if_serde_accepts(
            obj in arb_object(),
            fixed in prop::sample::subsequence(KEYS, 0..=KEYS.len()),
            pick in any::<usize>(),
            edits in prop::collection::vec((0u8..3, any::<prop::sample::Index>(), prop_oneof![
                prop::sample::select(b"{}[],:\"\\0123456789-+.eEtrufalsn dD8u \t\r\n\x00\x1f\x7f\x80\xbf\xc3\xe2\xed\xf0\xff/".to_vec()),
                any::<u8>(),
            ]), 1..4),
        ) {
            let mut line = serde_json::to_vec(&obj).unwrap();
            for (op, at, byte) in edits {
                let i = at.index(line.len() + 1);
                match op {
                    0 if i < line.len() => line[i] = byte,
                    1 if i < line.len() => { line.remove(i); }
                    _ => line.insert(i, byte),
                }
            }
            let names = wanted(&obj, fixed, pick);
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let ours = run(&line, &refs);
            let serde = serde_json::from_slice::<Value>(&line);
            let shown = String::from_utf8_lossy(&line);
            match (ours, serde) {
                (Ok(out), Ok(Value::Object(map))) => check_tokens(&map, &names, &out)?,
                (Ok(_), other) => prop_assert!(false, "accepted {} but serde says {:?}", shown, other),
                (Err(JsonError::DuplicateField { .. } | JsonError::TooDeep { .. }), _) => {}
                (Err(e), Ok(Value::Object(_))) => prop_assert!(false, "rejected {} ({}) but serde accepts", shown, e),
                (Err(_), _) => {}
            }
        }

        #[test]
        fn rfc3339_matches_naive_calendar(
            y in 0i64..=9999, m in 1i64..=12, d in 1i64..=31, h in 0i64..24, mi in 0i64..60, s in 0i64..60,
            frac in "[0-9]{0,9}", off in prop::option::of((any::<bool>(), 0i64..24, 0i64..60)),
        ) {
            let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let len = |y: i64, m: i64| [31, if leap(y) { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m as usize - 1];
            prop_assume!(d <= len(y, m));
            let mut days: i64 = (1..m).map(|mm| len(y, mm)).sum::<i64>() + d - 1;
            if y >= 1970 {
                days += (1970..y).map(|yy| if leap(yy) { 366 } else { 365 }).sum::<i64>();
            } else {
                days -= (y..1970).map(|yy| if leap(yy) { 366 } else { 365 }).sum::<i64>();
            }
            let mut text = format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}");
            let mut ms = 0;
            if !frac.is_empty() {
                text += &format!(".{frac}");
                ms = format!("{frac:0<9}")[..3].parse::<i64>().unwrap();
            }
            let off_min = match off {
                None => { text += "Z"; 0 }
                Some((neg, oh, om)) => {
                    text += &format!("{}{oh:02}:{om:02}", if neg { '-' } else { '+' });
                    if neg { -(oh * 60 + om) } else { oh * 60 + om }
                }
            };
            let want = (days * 86_400 + h * 3600 + mi * 60 + s - off_min * 60) * 1000 + ms;
            prop_assert_eq!(parse_rfc3339_ms(text.as_bytes()), Some(want), "{}", text);
        }
    }
}
