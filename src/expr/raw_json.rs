//! Field access on one raw JSON line, without building a DOM.
//!
//! [`RawJson`] walks the bytes along the path: in an object it reads each key and skips the
//! values of the others (matching brackets and skipping strings with their escapes); in an array
//! it skips elements up to the index. It checks the structure it walks through and the token it
//! returns (string escapes and UTF-8, number grammar, literals), and reports anything else as
//! [`RecordError::Malformed`] with the byte offset; malformation inside a skipped subtree may go
//! unnoticed. Path semantics and number reading match the `serde_json::Value` record (see
//! `record`), except that numbers are read exactly from their text. Strings without escapes borrow
//! from the line. Each lookup rescans from the start: cost is linear in the bytes before (and, for
//! duplicate-key detection, within) the object holding the field.

use std::borrow::Cow;

use super::ast::{FieldPath, Segment};
use super::error::RecordError;
use super::record::{number_from_json, Record};
use super::value::Value;

/// A record that is one JSON text, usually an object on one line.
#[derive(Clone, Copy, Debug)]
pub struct RawJson<'a>(pub &'a [u8]);

impl Record for RawJson<'_> {
    fn get(&self, path: &FieldPath) -> Result<Value<'_>, RecordError> {
        self.value_at(path)
    }
}

impl<'a> RawJson<'a> {
    /// The scalar at `path`, borrowing from the text itself (not from this wrapper), so a value
    /// read from a token found in a longer line lives as long as the line.
    pub fn value_at(self, path: &FieldPath) -> Result<Value<'a>, RecordError> {
        match self.seek(path)? {
            None => Ok(Value::Null),
            Some(mut scan) => scan.scalar(),
        }
    }

    /// The raw bytes of the value at `path` (any JSON value, checked only as far as skipping it
    /// needs); `None` when the path is missing.
    pub fn token_at(self, path: &FieldPath) -> Result<Option<&'a [u8]>, RecordError> {
        let Some(mut scan) = self.seek(path)? else {
            return Ok(None);
        };
        let start = scan.at;
        scan.skip_value()?;
        Ok(self.0.get(start..scan.at))
    }

    /// A scanner at the start of the value at `path`; `None` when the path is missing.
    fn seek(self, path: &FieldPath) -> Result<Option<Scanner<'a>>, RecordError> {
        let mut scan = Scanner {
            bytes: self.0,
            at: 0,
        };
        for segment in path.segments() {
            scan.skip_ws();
            let found = match segment {
                Segment::Key(key) => scan.enter_key(key)?,
                Segment::Index(index) => scan.enter_index(*index)?,
            };
            if !found {
                return Ok(None);
            }
        }
        scan.skip_ws();
        Ok(Some(scan))
    }
}

/// The value of one scalar JSON token (a number, string, `true`, `false` or `null`), such as a
/// field a one-pass extractor already found in a line.
pub fn scalar_token(token: &[u8]) -> Result<Value<'_>, RecordError> {
    // Most tokens read are integers: the same value the number grammar below gives, sooner.
    if let Some(i) = crate::record::json::plain_int(token) {
        return Ok(Value::Int(i));
    }
    let mut scan = Scanner {
        bytes: token,
        at: 0,
    };
    scan.skip_ws();
    scan.scalar()
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn malformed(&self, what: &'static str) -> RecordError {
        RecordError::Malformed {
            offset: self.at,
            what,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), RecordError> {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.malformed(what))
        }
    }

    /// At a value: if it is an object with `key`, moves to the value of its last `key` and
    /// returns true; otherwise returns false.
    fn enter_key(&mut self, key: &str) -> Result<bool, RecordError> {
        if self.peek() != Some(b'{') {
            return Ok(false);
        }
        self.at += 1;
        let mut found = None;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            return Ok(false);
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.malformed("expected a string key"));
            }
            let is_key = self.key_is(key)?;
            self.expect(b':', "expected `:` after a key")?;
            self.skip_ws();
            if is_key {
                found = Some(self.at);
            }
            self.skip_value()?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => break,
                _ => return Err(self.malformed("expected `,` or `}` in an object")),
            }
        }
        match found {
            Some(at) => {
                self.at = at;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// At a value: if it is an array longer than `index`, moves to that element and returns true.
    fn enter_index(&mut self, index: usize) -> Result<bool, RecordError> {
        if self.peek() != Some(b'[') {
            return Ok(false);
        }
        self.at += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            return Ok(false);
        }
        for _ in 0..index {
            self.skip_value()?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => return Ok(false),
                _ => return Err(self.malformed("expected `,` or `]` in an array")),
            }
            self.skip_ws();
        }
        Ok(true)
    }

    /// Moves past the value at the cursor.
    fn skip_value(&mut self) -> Result<(), RecordError> {
        match self.peek() {
            Some(b'{' | b'[') => self.skip_container(),
            Some(b'"') => self.skip_string().map(|_| ()),
            Some(b'-' | b'0'..=b'9') => self.number_token(),
            _ => self.scalar().map(|_| ()),
        }
    }

    /// Skips a nested object or array by counting brackets outside strings.
    fn skip_container(&mut self) -> Result<(), RecordError> {
        let mut depth = 0usize;
        loop {
            let rest = self.bytes.get(self.at..).unwrap_or_default();
            let next = rest
                .iter()
                .position(|b| matches!(b, b'{' | b'}' | b'[' | b']' | b'"'));
            self.at += next.unwrap_or(rest.len());
            match self.peek() {
                Some(b'{' | b'[') => depth += 1,
                Some(b'}' | b']') => {
                    depth -= 1;
                    if depth == 0 {
                        self.at += 1;
                        return Ok(());
                    }
                }
                Some(b'"') => {
                    self.skip_string()?;
                    continue;
                }
                Some(_) => {}
                None => return Err(self.malformed("unterminated object or array")),
            }
            self.at += 1;
        }
    }

    /// Moves past the string at the cursor; returns whether it has escapes.
    /// Control characters are only checked in strings that are read (`string`).
    fn skip_string(&mut self) -> Result<bool, RecordError> {
        self.at += 1;
        let mut escaped = false;
        loop {
            let rest = self.bytes.get(self.at..).unwrap_or_default();
            // A plain loop: JSON strings are mostly short, where memchr's setup costs more.
            match rest.iter().position(|b| *b == b'"' || *b == b'\\') {
                Some(offset) if rest[offset] == b'"' => {
                    self.at += offset + 1;
                    return Ok(escaped);
                }
                // A backslash: skip it and the byte it escapes.
                Some(offset) => {
                    escaped = true;
                    self.at += offset + 2;
                }
                None => {
                    self.at = self.bytes.len();
                    return Err(self.malformed("unterminated string"));
                }
            }
        }
    }

    /// Reads a key and tells whether it is `key`, without decoding keys that have no escapes.
    fn key_is(&mut self, key: &str) -> Result<bool, RecordError> {
        let start = self.at + 1;
        let escaped = self.skip_string()?;
        let raw = &self.bytes[start..self.at - 1];
        if !escaped {
            return Ok(raw == key.as_bytes());
        }
        self.at = start - 1;
        Ok(self.string()? == key)
    }

    /// Reads the string at the cursor.
    fn string(&mut self) -> Result<Cow<'a, str>, RecordError> {
        let start = self.at;
        let escaped = self.skip_string()?;
        let raw = &self.bytes[start + 1..self.at - 1];
        if let Some(offset) = raw.iter().position(|b| *b < 0x20) {
            let offset = start + 1 + offset;
            return Err(RecordError::Malformed {
                offset,
                what: "control character in a string",
            });
        }
        let text = std::str::from_utf8(raw).map_err(|e| RecordError::Malformed {
            offset: start + 1 + e.valid_up_to(),
            what: "invalid UTF-8 in a string",
        })?;
        if !escaped {
            return Ok(Cow::Borrowed(text));
        }
        unescape(text, start + 1).map(Cow::Owned)
    }

    /// Reads the scalar at the cursor.
    fn scalar(&mut self) -> Result<Value<'a>, RecordError> {
        let rest = &self.bytes[self.at..];
        for (word, value) in [
            (&b"null"[..], Value::Null),
            (b"true", Value::Bool(true)),
            (b"false", Value::Bool(false)),
        ] {
            if rest.starts_with(word) {
                self.at += word.len();
                return Ok(value);
            }
        }
        match self.peek() {
            Some(b'"') => self.string().map(Value::Str),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'{') => Err(RecordError::NotScalar { kind: "an object" }),
            Some(b'[') => Err(RecordError::NotScalar { kind: "an array" }),
            _ => Err(self.malformed("expected a JSON value")),
        }
    }

    /// Reads a number.
    fn number(&mut self) -> Result<Value<'a>, RecordError> {
        let start = self.at;
        self.number_token()?;
        // The token is ASCII by construction.
        let text = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or("");
        number_from_json(text).ok_or_else(|| RecordError::Number {
            text: text.to_owned(),
        })
    }

    /// Moves past a number token, checking JSON's grammar:
    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number_token(&mut self) -> Result<(), RecordError> {
        let digits = |s: &mut Self| {
            let from = s.at;
            while matches!(s.peek(), Some(b'0'..=b'9')) {
                s.at += 1;
            }
            s.at - from
        };
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let int_start = self.at;
        let int_digits = digits(self);
        if int_digits == 0 || (int_digits > 1 && self.bytes[int_start] == b'0') {
            return Err(self.malformed("invalid number"));
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return Err(self.malformed("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if digits(self) == 0 {
                return Err(self.malformed("invalid number"));
            }
        }
        Ok(())
    }
}

/// Decodes the escapes of a JSON string body; `offset` is where the body starts in the line.
fn unescape(text: &str, offset: usize) -> Result<String, RecordError> {
    let bad = |at: usize| RecordError::Malformed {
        offset: offset + at,
        what: "invalid escape in a string",
    };
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let decoded = match chars.next().map(|(_, c)| c) {
            Some('"') => '"',
            Some('\\') => '\\',
            Some('/') => '/',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('u') => {
                let high = hex4(&mut chars).ok_or_else(|| bad(at))?;
                if (0xD800..0xDC00).contains(&high) {
                    // A high surrogate must be followed by `\u` and a low surrogate.
                    let backslash = chars.next().map(|(_, c)| c);
                    let u = chars.next().map(|(_, c)| c);
                    let low = hex4(&mut chars).filter(|low| (0xDC00..0xE000).contains(low));
                    match (backslash, u, low) {
                        (Some('\\'), Some('u'), Some(low)) => {
                            char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                                .ok_or_else(|| bad(at))?
                        }
                        _ => return Err(bad(at)),
                    }
                } else {
                    char::from_u32(high).ok_or_else(|| bad(at))?
                }
            }
            _ => return Err(bad(at)),
        };
        out.push(decoded);
    }
    Ok(out)
}

fn hex4(chars: &mut std::str::CharIndices<'_>) -> Option<u32> {
    let mut value = 0;
    for _ in 0..4 {
        let digit = chars.next()?.1.to_digit(16)?;
        value = value * 16 + digit;
    }
    Some(value)
}
