//! Values of a result line (the shared [`columns`](crate::record::columns) model: raw JSON text,
//! never a float) converted into cells of the Parquet sink's typed columns: exact decimals rescaled
//! to the column's scale without rounding (more fraction digits than it has, or more digits than
//! its precision, is an error, not a rounding), 64-bit integers, epoch-ms timestamps, floats only
//! for `double` columns, strings, and nested values as JSON text. A value that does not fit says
//! why, so its row can go to the dead letters.

use super::nested::Node;
use crate::record::columns::{ColumnType, Value};
use std::borrow::Cow;

/// The largest precision a Parquet decimal column here takes (Arrow's `Decimal128`).
pub const MAX_PRECISION: u8 = 38;

/// A column type's name as `columns` spells it (and [`ColumnType::parse`] reads back): kept in
/// the files' schema and shown in messages.
pub fn type_name(t: ColumnType) -> String {
    match t {
        ColumnType::BigInt => "bigint".into(),
        ColumnType::Double => "double".into(),
        ColumnType::Decimal(Some((p, s))) => format!("decimal({p},{s})"),
        ColumnType::Decimal(None) => "decimal".into(),
        ColumnType::Text => "text".into(),
        ColumnType::Boolean => "boolean".into(),
        ColumnType::Timestamp => "timestamp".into(),
        ColumnType::Json => "json".into(),
    }
}

/// Precision and scale of a decimal column (an unconstrained one, which a Parquet file cannot
/// have, was given its scale from the first rows: see `rows::Layout::infer`).
pub fn decimal_of(t: ColumnType) -> (u8, u8) {
    match t {
        ColumnType::Decimal(Some(ps)) => ps,
        _ => (MAX_PRECISION, 0),
    }
}

/// One value, ready for its column's builder.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    Null,
    I64(i64),
    /// Unscaled, at the column's scale.
    Dec(i128),
    F64(f64),
    Bool(bool),
    Str(Cow<'a, str>),
    /// A value of a struct or list column.
    Nested(Box<Node>),
}

impl Cell<'_> {
    pub fn into_owned(self) -> Cell<'static> {
        match self {
            Cell::Null => Cell::Null,
            Cell::I64(v) => Cell::I64(v),
            Cell::Dec(v) => Cell::Dec(v),
            Cell::F64(v) => Cell::F64(v),
            Cell::Bool(v) => Cell::Bool(v),
            Cell::Str(s) => Cell::Str(Cow::Owned(s.into_owned())),
            Cell::Nested(n) => Cell::Nested(n),
        }
    }
}

/// An exact decimal read from JSON number text: `digits` unscaled, `scale` digits after the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dec {
    pub unscaled: i128,
    pub scale: u32,
}

/// Reads a JSON number's text exactly (`-12.50`, `3`, `1.5e3`); `None` when it has more than 38
/// significant digits or is not a number.
pub fn parse_decimal(text: &str) -> Option<Dec> {
    let (neg, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i32>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || (mantissa.contains('.') && frac.is_empty()) {
        return None;
    }
    let mut v: i128 = 0;
    let mut digits = 0u32;
    for b in int.bytes().chain(frac.bytes()) {
        if digits > 0 || b != b'0' {
            digits += 1;
        }
        if digits > u32::from(MAX_PRECISION) {
            return None;
        }
        v = v * 10 + i128::from(b - b'0');
    }
    let mut scale = frac.len() as i64 - i64::from(exp);
    while scale < 0 {
        v = v.checked_mul(10)?;
        digits += 1;
        scale += 1;
        if digits > u32::from(MAX_PRECISION) {
            return None;
        }
    }
    let scale = u32::try_from(scale).ok()?;
    if scale > u32::from(MAX_PRECISION) {
        return None;
    }
    Some(Dec {
        unscaled: if neg { -v } else { v },
        scale,
    })
}

/// Number of decimal digits of `v` (0 has none).
fn digit_count(mut v: u128) -> u32 {
    let mut n = 0;
    while v > 0 {
        v /= 10;
        n += 1;
    }
    n
}

/// `d` at `scale` within `precision` digits: trailing zeros beyond the scale are dropped, other
/// digits beyond it are an error (never rounded).
pub fn rescale(d: Dec, precision: u8, scale: u8) -> Result<i128, String> {
    let target = u32::from(scale);
    let mut v = d.unscaled;
    let mut s = d.scale;
    while s > target {
        if v % 10 != 0 {
            return Err(format!(
                "has {} digits after the point; the column has {target}",
                d.scale
            ));
        }
        v /= 10;
        s -= 1;
    }
    while s < target {
        v = v
            .checked_mul(10)
            .ok_or_else(|| format!("does not fit decimal({precision},{scale})"))?;
        s += 1;
    }
    if digit_count(v.unsigned_abs()) > u32::from(precision) {
        return Err(format!(
            "has more than {precision} digits, the column's precision"
        ));
    }
    Ok(v)
}

/// Converts `v` into a cell of a `ty` column; `Err` says why it does not fit (without the sink's
/// and column's names, which the caller adds).
pub fn convert<'a>(ty: ColumnType, v: &'a Value<'_>) -> Result<Cell<'a>, String> {
    let shown = || {
        let t = v.text().unwrap_or(Cow::Borrowed("null"));
        let mut s: String = t.chars().take(40).collect();
        if s.len() < t.len() {
            s.push('…');
        }
        s
    };
    let name = type_name(ty);
    match (ty, v) {
        (_, Value::Null) => Ok(Cell::Null),
        (ColumnType::BigInt | ColumnType::Timestamp, Value::Int(t)) => {
            t.parse::<i64>().map(Cell::I64).map_err(|_| {
                format!(
                    "`{}` is not an integer that fits 64 bits; the column is {name}",
                    shown()
                )
            })
        }
        (ColumnType::BigInt | ColumnType::Timestamp, _) => Err(format!(
            "`{}` is not an integer; the column is {name}",
            shown()
        )),
        (ColumnType::Decimal(_), Value::Int(t) | Value::Number(t)) => {
            let d = parse_decimal(t)
                .ok_or_else(|| format!("`{}` has more than {MAX_PRECISION} digits", shown()))?;
            let (p, s) = decimal_of(ty);
            rescale(d, p, s)
                .map(Cell::Dec)
                .map_err(|why| format!("`{}` {why} ({name})", shown()))
        }
        (ColumnType::Decimal(_), _) => Err(format!(
            "`{}` is not a number; the column is {name}",
            shown()
        )),
        (ColumnType::Double, Value::Int(t) | Value::Number(t)) => t
            .parse::<f64>()
            .map(Cell::F64)
            .map_err(|_| format!("`{}` is not a number", shown())),
        (ColumnType::Double, _) => Err(format!(
            "`{}` is not a number; the column is {name}",
            shown()
        )),
        (ColumnType::Boolean, Value::Bool(b)) => Ok(Cell::Bool(*b)),
        (ColumnType::Boolean, _) => Err(format!(
            "`{}` is not a boolean; the column is {name}",
            shown()
        )),
        // A string column takes strings as they are, anything else as its JSON text.
        (ColumnType::Text, Value::Str(s)) => Ok(Cell::Str(Cow::Borrowed(s))),
        (ColumnType::Json, Value::Str(s)) => serde_json::to_string(s)
            .map(|j| Cell::Str(Cow::Owned(j)))
            .map_err(|e| format!("bad string: {e}")),
        (ColumnType::Text | ColumnType::Json, v) => {
            Ok(Cell::Str(v.text().unwrap_or(Cow::Borrowed("null"))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::columns::fields;

    fn dec(p: u8, s: u8) -> ColumnType {
        ColumnType::Decimal(Some((p, s)))
    }

    #[test]
    fn type_names_read_back() {
        for t in [
            ColumnType::BigInt,
            ColumnType::Double,
            dec(18, 2),
            ColumnType::Decimal(None),
            ColumnType::Text,
            ColumnType::Boolean,
            ColumnType::Timestamp,
            ColumnType::Json,
        ] {
            assert_eq!(ColumnType::parse(&type_name(t)), Ok(t));
        }
    }

    #[test]
    fn decimals_are_read_exactly_from_their_text() {
        let d = |u, s| {
            Some(Dec {
                unscaled: u,
                scale: s,
            })
        };
        assert_eq!(parse_decimal("2.50"), d(250, 2));
        assert_eq!(parse_decimal("-0.07"), d(-7, 2));
        assert_eq!(parse_decimal("12"), d(12, 0));
        assert_eq!(parse_decimal("1.5e3"), d(1500, 0));
        assert_eq!(parse_decimal("25e-3"), d(25, 3));
        assert_eq!(
            parse_decimal("12345678901234567890123456789012345678"),
            d(12345678901234567890123456789012345678, 0)
        );
        assert_eq!(
            parse_decimal("123456789012345678901234567890123456789"),
            None
        );
        assert_eq!(
            parse_decimal("0.000000000000000000000000000000000000001"),
            None
        );
        for bad in ["", "-", "1.", ".5", "1e", "abc", "1.2.3"] {
            assert_eq!(parse_decimal(bad), None, "{bad}");
        }
        assert_eq!(rescale(parse_decimal("0.30").unwrap(), 38, 2), Ok(30));
        assert_eq!(rescale(parse_decimal("7").unwrap(), 18, 2), Ok(700));
        assert_eq!(rescale(parse_decimal("7.100").unwrap(), 18, 2), Ok(710));
        assert!(rescale(parse_decimal("7.105").unwrap(), 18, 2).is_err());
        assert!(rescale(parse_decimal("1234567890123456.78").unwrap(), 18, 2).is_ok());
        assert!(rescale(parse_decimal("12345678901234567.8").unwrap(), 18, 2).is_err());
    }

    /// The one field of `{"v": raw}`.
    fn value(raw: &str) -> Value<'static> {
        let line: &'static str = Box::leak(format!("{{\"v\":{raw}}}").into_boxed_str());
        fields(line.as_bytes()).unwrap().remove(0).1
    }

    fn conv(ty: ColumnType, raw: &str) -> Result<Cell<'static>, String> {
        let v: &'static Value<'static> = Box::leak(Box::new(value(raw)));
        convert(ty, v)
    }

    #[test]
    fn values_that_do_not_fit_their_column_say_why() {
        assert_eq!(conv(ColumnType::BigInt, "42"), Ok(Cell::I64(42)));
        assert_eq!(conv(ColumnType::BigInt, "null"), Ok(Cell::Null));
        let e = conv(ColumnType::BigInt, "\"abc\"").unwrap_err();
        assert!(e.contains("not an integer") && e.contains("bigint"), "{e}");
        assert!(conv(ColumnType::BigInt, "2.5").is_err());
        assert!(conv(ColumnType::BigInt, "99999999999999999999").is_err());
        assert_eq!(conv(dec(18, 2), "2.5"), Ok(Cell::Dec(250)));
        assert_eq!(conv(dec(18, 2), "3"), Ok(Cell::Dec(300)));
        let e = conv(dec(18, 2), "2.555").unwrap_err();
        assert!(
            e.contains("3 digits after the point") && e.contains("decimal(18,2)"),
            "{e}"
        );
        let e = conv(dec(4, 2), "123.4").unwrap_err();
        assert!(e.contains("more than 4 digits"), "{e}");
        assert!(conv(dec(18, 2), "true").is_err());
        assert_eq!(conv(ColumnType::Boolean, "true"), Ok(Cell::Bool(true)));
        assert!(conv(ColumnType::Boolean, "1").is_err());
        assert_eq!(
            conv(ColumnType::Text, "\"a\\\"b\""),
            Ok(Cell::Str("a\"b".into()))
        );
        assert_eq!(conv(ColumnType::Text, "12"), Ok(Cell::Str("12".into())));
        assert_eq!(
            conv(ColumnType::Json, "{\"a\": [1]}"),
            Ok(Cell::Str("{\"a\": [1]}".into()))
        );
        assert_eq!(
            conv(ColumnType::Json, "\"x\""),
            Ok(Cell::Str("\"x\"".into()))
        );
        assert_eq!(conv(ColumnType::Double, "1e300"), Ok(Cell::F64(1e300)));
        assert_eq!(
            conv(ColumnType::Timestamp, "1700000000000"),
            Ok(Cell::I64(1_700_000_000_000))
        );
        assert!(conv(ColumnType::Timestamp, "\"2023-01-01\"").is_err());
    }
}
