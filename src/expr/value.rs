//! Run-time values and their JSON text.
//!
//! A [`Value`] is a scalar: null, boolean, `i64`, exact decimal, double (SQL's DOUBLE, only
//! where a query asks for one) or string. Strings are
//! `Cow`s so values read from a record or from the program's constants borrow instead of copying.

use std::borrow::Cow;
use std::fmt;
use std::io::Write as _;

use rust_decimal::Decimal;

/// A value an expression reads or produces.
///
/// `PartialEq` is structural with decimals compared by value (`1.50 == 1.5`) but `Int(1)` and
/// `Decimal(1)` unequal; the language's `==` compares numbers across both.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Decimal(Decimal),
    /// SQL's DOUBLE: IEEE arithmetic, written as Java writes it (`100.0`, `1.0E10`).
    Float(f64),
    Str(Cow<'a, str>),
}

impl<'a> Value<'a> {
    /// A borrowed string value.
    pub fn str(s: &'a str) -> Self {
        Value::Str(Cow::Borrowed(s))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The name of the value's type in error messages: null, bool, int, decimal or string.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Decimal(_) => "decimal",
            Value::Float(_) => "double",
            Value::Str(_) => "string",
        }
    }

    /// The same value, borrowing its string from `self` instead of copying it.
    pub fn borrowed(&self) -> Value<'_> {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(*b),
            Value::Int(i) => Value::Int(*i),
            Value::Decimal(d) => Value::Decimal(*d),
            Value::Float(f) => Value::Float(*f),
            Value::Str(s) => Value::Str(Cow::Borrowed(s)),
        }
    }

    /// The same value owning its string, free of any borrow.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(b),
            Value::Int(i) => Value::Int(i),
            Value::Decimal(d) => Value::Decimal(d),
            Value::Float(f) => Value::Float(f),
            Value::Str(s) => Value::Str(Cow::Owned(s.into_owned())),
        }
    }

    /// Appends the value as JSON: `null`, `true`, `42`, `21.65758579` (decimals exactly, with
    /// their scale: `2.50` stays `2.50`), or a string with `"`, `\` and control characters escaped.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Value::Null => out.extend_from_slice(b"null"),
            Value::Bool(true) => out.extend_from_slice(b"true"),
            Value::Bool(false) => out.extend_from_slice(b"false"),
            // Writing into a `Vec<u8>` cannot fail, so the io::Result carries nothing.
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Decimal(d) => {
                let _ = write!(out, "{d}");
            }
            // NaN and the infinities have no JSON number: written as strings, as Jackson does.
            Value::Float(f) if !f.is_finite() => {
                write_json_string(&super::float::java_string(*f), out)
            }
            Value::Float(f) => out.extend_from_slice(super::float::java_string(*f).as_bytes()),
            Value::Str(s) => write_json_string(s, out),
        }
    }
}

/// The value as plain text: strings unquoted, `null` for null, numbers as in JSON.
impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Decimal(d) => write!(f, "{d}"),
            Value::Float(d) => f.write_str(&super::float::java_string(*d)),
            Value::Str(s) => f.write_str(s),
        }
    }
}

impl From<bool> for Value<'_> {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<i64> for Value<'_> {
    fn from(i: i64) -> Self {
        Value::Int(i)
    }
}

impl From<Decimal> for Value<'_> {
    fn from(d: Decimal) -> Self {
        Value::Decimal(d)
    }
}

impl From<f64> for Value<'_> {
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(s: &'a str) -> Self {
        Value::str(s)
    }
}

impl From<String> for Value<'_> {
    fn from(s: String) -> Self {
        Value::Str(Cow::Owned(s))
    }
}

impl<'a, T: Into<Value<'a>>> From<Option<T>> for Value<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// `d` with the sign of a zero cleared: `-0.0` (from `-(0.0)`, `-0.4` rounded, or `-0.0` in a
/// record) would print as `-0.0` and look like a different value. The scale is kept.
pub(super) fn canonical(mut d: Decimal) -> Decimal {
    if d.is_zero() {
        d.set_sign_positive(true);
    }
    d
}

/// Appends `s` as a JSON string literal.
pub fn write_json_string(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut clean_from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => &[],
            _ => continue,
        };
        out.extend_from_slice(&bytes[clean_from..i]);
        if escape.is_empty() {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]);
        } else {
            out.extend_from_slice(escape);
        }
        clean_from = i + 1;
    }
    out.extend_from_slice(&bytes[clean_from..]);
    out.push(b'"');
}
