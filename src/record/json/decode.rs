//! Decoding of tokens the scanner located: numbers ([`parse_number`]), strings ([`unescape`],
//! with the escape decoder the scanner also uses to validate strings and match escaped keys) and
//! the canonical bytes of a token used as a group-by key or distinct value ([`canonical`]).
//!
//! Must stay true: only strings with escapes allocate, and inputs are checked with the same
//! grammar as [`super::extract`], so a token decoded here is one the scanner would accept.

use super::swar::{load8, non_digits, parse8};
use super::{JsonError, Number, Scan, Token, TokenKind};
use memchr::memchr;
use std::borrow::Cow;

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
pub(super) fn decode_escape(b: &[u8], i: usize) -> Result<(char, usize), JsonError> {
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
pub(super) fn unescape_to(
    content: &[u8],
    emit: &mut impl FnMut(&[u8]) -> bool,
) -> Result<bool, JsonError> {
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

/// JSON number token -> Int if it is an integer literal that fits i64 (no '.', 'e'), else Float.
#[inline]
pub fn parse_number(raw: &[u8]) -> Result<Number, JsonError> {
    let neg = raw.first() == Some(&b'-');
    match small_int(&raw[usize::from(neg)..]) {
        Some(v) => Ok(Number::Int(if neg { -v } else { v })),
        None => parse_number_slow(raw),
    }
}

/// The value of a number token that is a plain integer of at most 18 digits (`-?[1-9][0-9]*`
/// or `0`), the common case every reader of integers checks first; `None` for anything else,
/// which the caller parses in full.
#[inline]
pub fn plain_int(raw: &[u8]) -> Option<i64> {
    let neg = raw.first() == Some(&b'-');
    small_int(&raw[usize::from(neg)..]).map(|v| if neg { -v } else { v })
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
