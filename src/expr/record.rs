//! Field access: the [`Record`] trait, its `serde_json::Value` implementation, and the exact
//! reading of JSON number text shared with `raw_json`.
//!
//! Both record kinds agree on paths: a missing key, an index past the end, or a step into a value
//! that is not an object (for a key) or an array (for an index) gives null; a path ending on an
//! object or array is an error ([`RecordError::NotScalar`]); with duplicate keys the last wins.
//! Numbers: an integer without fraction or exponent that fits `i64` is an `Int`, every other
//! number a `Decimal` read exactly from its text, or an error if no decimal holds it exactly.
//! A `serde_json::Value` has already turned non-integers into `f64` (the crate does not enable
//! serde_json's `arbitrary_precision`), so it gives the shortest decimal that reads back as the
//! same `f64` (`19.99`, but `1.50` comes back as `1.5`, and `-0` as the decimal `-0.0`);
//! [`super::RawJson`] reads the text itself and is exact.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use rust_decimal::Decimal;

use super::ast::{FieldPath, Segment};
use super::error::RecordError;
use super::value::{canonical, Value};

/// Something expressions can read fields from.
pub trait Record {
    /// The scalar at `path`, null when the path leads nowhere.
    fn get(&self, path: &FieldPath) -> Result<Value<'_>, RecordError>;
}

impl<R: Record + ?Sized> Record for &R {
    fn get(&self, path: &FieldPath) -> Result<Value<'_>, RecordError> {
        (**self).get(path)
    }
}

/// The record with no fields: every path is null. Used to fold constant expressions.
impl Record for () {
    fn get(&self, _path: &FieldPath) -> Result<Value<'_>, RecordError> {
        Ok(Value::Null)
    }
}

impl Record for serde_json::Value {
    fn get(&self, path: &FieldPath) -> Result<Value<'_>, RecordError> {
        let mut at = self;
        for segment in path.segments() {
            let next = match segment {
                Segment::Key(key) => at.as_object().and_then(|object| object.get(key)),
                Segment::Index(index) => at.as_array().and_then(|array| array.get(*index)),
            };
            match next {
                Some(value) => at = value,
                None => return Ok(Value::Null),
            }
        }
        match at {
            serde_json::Value::Null => Ok(Value::Null),
            serde_json::Value::Bool(b) => Ok(Value::Bool(*b)),
            serde_json::Value::String(s) => Ok(Value::Str(Cow::Borrowed(s))),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(Value::Int(i))
                } else if let Some(u) = n.as_u64() {
                    Ok(Value::Decimal(Decimal::from(u)))
                } else {
                    // serde_json prints an f64 as the shortest text that reads back as it; format
                    // it on the stack so reading a number does not allocate.
                    let mut text = StackText::new();
                    let _ = write!(text, "{n}");
                    let text = text.as_str();
                    number_from_json(text).ok_or_else(|| RecordError::Number {
                        text: text.to_owned(),
                    })
                }
            }
            serde_json::Value::Array(_) => Err(RecordError::NotScalar { kind: "an array" }),
            serde_json::Value::Object(_) => Err(RecordError::NotScalar { kind: "an object" }),
        }
    }
}

/// A small text buffer on the stack; writes past its end are dropped (and then fail to parse).
struct StackText {
    bytes: [u8; 32],
    len: usize,
}

impl StackText {
    fn new() -> Self {
        Self {
            bytes: [0; 32],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let slot = self.bytes.get_mut(self.len..end).ok_or(fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// The value of a valid JSON number token, or `None` when no `i64` or `Decimal` holds it exactly.
pub(super) fn number_from_json(text: &str) -> Option<Value<'static>> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    if exponent.is_none() && !mantissa.contains('.') {
        if let Ok(i) = mantissa.parse::<i64>() {
            return Some(Value::Int(i));
        }
    }
    let mut value = Decimal::from_str_exact(mantissa).ok()?;
    if let Some(exponent) = exponent {
        let exponent: i64 = exponent
            .strip_prefix('+')
            .unwrap_or(exponent)
            .parse()
            .ok()?;
        value = shift(value, exponent)?;
    }
    Some(Value::Decimal(canonical(value)))
}

/// `value * 10^exponent`, exactly.
fn shift(mut value: Decimal, exponent: i64) -> Option<Decimal> {
    if value.is_zero() {
        return Some(Decimal::ZERO);
    }
    let scale = i64::from(value.scale());
    let new_scale = scale - exponent;
    if (0..=i64::from(Decimal::MAX_SCALE)).contains(&new_scale) {
        value.set_scale(u32::try_from(new_scale).ok()?).ok()?;
        return Some(value);
    }
    if new_scale > 0 {
        return None;
    }
    // Move the point to the end, then multiply by the remaining power of ten.
    value.set_scale(0).ok()?;
    let mut remaining = -new_scale;
    if remaining > 28 {
        // Even a mantissa of 1 times 10^29 is past Decimal::MAX.
        return None;
    }
    while remaining > 0 {
        value = value.checked_mul(Decimal::TEN)?;
        remaining -= 1;
    }
    Some(value)
}
