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
//!
//! Layout: this file holds the public types and the validating scanner ([`extract`]); `decode`
//! turns located tokens into values ([`parse_number`], [`unescape`], [`canonical`]), `rfc3339`
//! parses timestamps ([`parse_rfc3339_ms`]) and `swar` holds the 8-bytes-at-a-time byte-class
//! tricks both of them use.

mod decode;
mod fields;
mod rfc3339;
mod shape;
mod swar;
#[cfg(test)]
mod tests;

pub use decode::{canonical, parse_number, plain_int, unescape};
pub use fields::FieldSet;
pub use rfc3339::parse_rfc3339_ms;
pub use shape::KeyShape;

use decode::decode_escape;
use swar::{digits_end, next_special};
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

/// Where a [`Token`] lies in its line, kept past the line's borrow: a source's parser keeps the
/// tokens of its last record for the filters and selects that read that record next, so they
/// need no pass of their own over it.
#[derive(Clone, Copy, Debug)]
pub struct Span {
    start: usize,
    len: usize,
    kind: TokenKind,
    has_escape: bool,
}

impl Span {
    /// The span of `token`, found in `line` by [`extract`].
    pub fn of(line: &[u8], token: &Token<'_>) -> Span {
        Span {
            start: (token.raw.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize),
            len: token.raw.len(),
            kind: token.kind,
            has_escape: token.has_escape,
        }
    }

    /// The token again, in the same line (`None` if `line` is too short to be it).
    pub fn token<'a>(&self, line: &'a [u8]) -> Option<Token<'a>> {
        let raw = line.get(self.start..self.start.checked_add(self.len)?)?;
        Some(Token {
            kind: self.kind,
            raw,
            has_escape: self.has_escape,
        })
    }
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
    scan_object(line, fields, None, out)
}

/// [`extract`] for a parser that reads many lines of one producer: keys at the place they had in
/// the previous line are matched by their bytes (see [`KeyShape`]). Same result, same errors.
pub fn extract_shaped<'a>(
    line: &'a [u8],
    fields: &FieldSet,
    shape: &mut KeyShape,
    out: &mut [Option<Token<'a>>],
) -> Result<(), JsonError> {
    scan_object(line, fields, Some(shape), out)
}

#[inline(always)]
fn scan_object<'a>(
    line: &'a [u8],
    fields: &FieldSet,
    mut shape: Option<&mut KeyShape>,
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
        let mut k = 0;
        loop {
            let key_at = s.i;
            let known = shape.as_deref().and_then(|sh| sh.matches(line, key_at, k));
            let slot = match known {
                Some((slot, len)) => {
                    s.i += len;
                    slot
                }
                None => {
                    let (slot, plain_colon) = s.slot_of_key(fields)?;
                    if let (Some(sh), Some(colon)) = (shape.as_deref_mut(), plain_colon) {
                        sh.learn(line, key_at, colon, k, slot);
                    }
                    slot
                }
            };
            s.ws();
            let start = s.i;
            let (kind, has_escape) = s.value(2)?;
            put(out, slot, key_at, kind, &line[start..s.i], has_escape)?;
            k += 1;
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

/// Stores a wanted field's token in its slot (a second one is an error).
#[inline(always)]
fn put<'a>(
    out: &mut [Option<Token<'a>>],
    slot: Option<usize>,
    key_at: usize,
    kind: TokenKind,
    raw: &'a [u8],
    has_escape: bool,
) -> Result<(), JsonError> {
    if let Some(o) = slot.and_then(|k| out.get_mut(k)) {
        if o.is_some() {
            return Err(JsonError::DuplicateField { at: key_at });
        }
        *o = Some(Token {
            kind,
            raw,
            has_escape,
        });
    }
    Ok(())
}

/// Cursor over one line. Invariant: `i <= b.len()`.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    /// At a key of the line's object: scans `"key":` and returns the key's slot and, when the
    /// key has no escape and its colon follows the closing quote (a key [`KeyShape`] may
    /// remember), the colon's index. The cursor is left after the colon.
    #[inline(always)]
    fn slot_of_key(
        &mut self,
        fields: &FieldSet,
    ) -> Result<(Option<usize>, Option<usize>), JsonError> {
        let line = self.b;
        let key_at = self.i;
        let (key_escaped, key_end) = self.key()?;
        let colon = self.i - 1;
        let plain_colon = (!key_escaped && colon == key_end + 1).then_some(colon);
        // `string` accepted the key's escapes, so unescaping it cannot fail here.
        let slot = if key_escaped {
            fields.slot_escaped(&line[key_at + 1..key_end])?
        } else {
            fields.slot_in(line, key_at + 1, key_end)
        };
        Ok((slot, plain_colon))
    }

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
                        escaped |= self.key()?.0;
                        self.ws();
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
                            escaped |= self.key()?.0;
                            self.ws();
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

    /// Inside an object at a key: moves past `"key" :`; returns whether the key has escapes and
    /// the index of its closing quote.
    #[inline(always)]
    fn key(&mut self) -> Result<(bool, usize), JsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.expected("a string key"));
        }
        let escaped = self.string()?;
        let key_end = self.i - 1;
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.expected("':'"));
        }
        self.i += 1;
        Ok((escaped, key_end))
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

/// A decoded JSON number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    Float(f64),
}
