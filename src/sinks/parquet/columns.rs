//! The Parquet sink's column model: the types a column can have (`bigint`, exact `decimal(P,S)`,
//! `double`, `string`, `boolean`, `timestamp` from epoch milliseconds, `json` for nested values),
//! the names a config pins them by, inference from the raw JSON text of the first rows (integers
//! -> bigint, numbers with a fraction -> decimal(38, the largest scale seen), never a float unless
//! pinned), and the conversion of one raw JSON value into a cell of its column, with a reason when
//! it does not fit. Numbers are read from their text, never through `f64`.
//! (A sink-local model: the shared `sinks::columns` module may replace it.)

use std::borrow::Cow;

/// The largest precision a Parquet decimal column here takes (Arrow's `Decimal128`).
pub const MAX_PRECISION: u8 = 38;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Int64,
    /// Exact decimal: `precision` digits, `scale` of them after the point.
    Decimal {
        precision: u8,
        scale: u8,
    },
    Double,
    Utf8,
    Boolean,
    /// TIMESTAMP(MILLIS, UTC) from an epoch-ms integer.
    Timestamp,
    /// Any JSON value, stored as its JSON text in a UTF8 column.
    Json,
}

impl std::fmt::Display for ColumnType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ColumnType::Int64 => f.write_str("bigint"),
            ColumnType::Decimal { precision, scale } => write!(f, "decimal({precision},{scale})"),
            ColumnType::Double => f.write_str("double"),
            ColumnType::Utf8 => f.write_str("string"),
            ColumnType::Boolean => f.write_str("boolean"),
            ColumnType::Timestamp => f.write_str("timestamp"),
            ColumnType::Json => f.write_str("json"),
        }
    }
}

/// What a pinned type name must look like, for messages.
pub const EXPECTED: &str = "one of bigint, decimal(P,S) (1 <= P <= 38, 0 <= S <= P), double, \
                            string, boolean, timestamp (epoch ms, stored as UTC millis), json";

/// Parses a pinned type name (`columns = { spend = "decimal(18,2)" }`); `Err` says what is wrong.
pub fn parse_type(name: &str) -> Result<ColumnType, String> {
    let n = name.trim().to_ascii_lowercase();
    let t = match n.as_str() {
        "bigint" | "int64" | "long" | "integer" => ColumnType::Int64,
        "double" | "float64" => ColumnType::Double,
        "string" | "utf8" | "text" | "varchar" => ColumnType::Utf8,
        "boolean" | "bool" => ColumnType::Boolean,
        "timestamp" => ColumnType::Timestamp,
        "json" => ColumnType::Json,
        _ => {
            let inner = n
                .strip_prefix("decimal(")
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| format!("`{name}` is not a column type: expected {EXPECTED}"))?;
            let (p, s) = inner.split_once(',').ok_or_else(|| {
                format!("`{name}`: a decimal needs a precision and a scale, e.g. decimal(18,2)")
            })?;
            let (p, s) = match (p.trim().parse::<u8>(), s.trim().parse::<u8>()) {
                (Ok(p), Ok(s)) => (p, s),
                _ => {
                    return Err(format!(
                        "`{name}`: precision and scale must be whole numbers, e.g. decimal(18,2)"
                    ))
                }
            };
            if p == 0 || p > MAX_PRECISION || s > p {
                return Err(format!(
                    "`{name}`: expected 1 <= precision <= {MAX_PRECISION} and scale <= precision"
                ));
            }
            ColumnType::Decimal {
                precision: p,
                scale: s,
            }
        }
    };
    Ok(t)
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
}

/// The kind of a raw JSON value, from its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Number,
    String,
    Nested,
}

pub fn kind(raw: &str) -> Kind {
    match raw.as_bytes().first() {
        Some(b'n') => Kind::Null,
        Some(b't' | b'f') => Kind::Bool,
        Some(b'"') => Kind::String,
        Some(b'{' | b'[') => Kind::Nested,
        _ => Kind::Number,
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

/// The column type of the values seen so far, `None` while only nulls were: a fold over a column.
pub fn infer(seen: Option<ColumnType>, raw: &str) -> Option<ColumnType> {
    let this = match kind(raw) {
        Kind::Null => return seen,
        Kind::Bool => ColumnType::Boolean,
        Kind::String => ColumnType::Utf8,
        Kind::Nested => ColumnType::Json,
        Kind::Number => match parse_decimal(raw) {
            Some(d) if d.scale == 0 && !raw.contains(['.', 'e', 'E']) => {
                if i64::try_from(d.unscaled).is_ok() {
                    ColumnType::Int64
                } else {
                    decimal(0)
                }
            }
            Some(d) => decimal(d.scale as u8),
            // Beyond what a decimal column holds: the value is dead-lettered, the type unchanged.
            None => return seen,
        },
    };
    Some(match (seen, this) {
        (None, t) => t,
        (Some(a), b) if a == b => a,
        (Some(ColumnType::Decimal { scale: a, .. }), ColumnType::Decimal { scale: b, .. }) => {
            decimal(a.max(b))
        }
        (Some(ColumnType::Decimal { scale, .. }), ColumnType::Int64)
        | (Some(ColumnType::Int64), ColumnType::Decimal { scale, .. }) => decimal(scale),
        (Some(ColumnType::Json), _) | (_, ColumnType::Json) => ColumnType::Json,
        // Mixed scalars: kept as their text.
        _ => ColumnType::Utf8,
    })
}

fn decimal(scale: u8) -> ColumnType {
    ColumnType::Decimal {
        precision: MAX_PRECISION,
        scale,
    }
}

/// Converts raw JSON value `raw` into a cell of a `ty` column; `Err` says why it does not fit
/// (without the sink's and column's names, which the caller adds).
pub fn convert(ty: ColumnType, raw: &str) -> Result<Cell<'_>, String> {
    let k = kind(raw);
    if k == Kind::Null {
        return Ok(Cell::Null);
    }
    let shown = || {
        let mut s: String = raw.chars().take(40).collect();
        if s.len() < raw.len() {
            s.push('…');
        }
        s
    };
    match ty {
        ColumnType::Int64 | ColumnType::Timestamp => {
            if k != Kind::Number {
                return Err(format!(
                    "`{}` is not an integer; the column is {ty}",
                    shown()
                ));
            }
            match raw.parse::<i64>() {
                Ok(v) => Ok(Cell::I64(v)),
                Err(_) => Err(format!(
                    "`{}` is not an integer that fits 64 bits; the column is {ty}",
                    shown()
                )),
            }
        }
        ColumnType::Decimal { precision, scale } => {
            if k != Kind::Number {
                return Err(format!("`{}` is not a number; the column is {ty}", shown()));
            }
            let d = parse_decimal(raw)
                .ok_or_else(|| format!("`{}` has more than {MAX_PRECISION} digits", shown()))?;
            rescale(d, precision, scale)
                .map(Cell::Dec)
                .map_err(|why| format!("`{}` {why} ({ty})", shown()))
        }
        ColumnType::Double => {
            if k != Kind::Number {
                return Err(format!("`{}` is not a number; the column is {ty}", shown()));
            }
            raw.parse::<f64>()
                .map(Cell::F64)
                .map_err(|_| format!("`{}` is not a number", shown()))
        }
        ColumnType::Boolean => match raw {
            "true" => Ok(Cell::Bool(true)),
            "false" => Ok(Cell::Bool(false)),
            _ => Err(format!(
                "`{}` is not a boolean; the column is {ty}",
                shown()
            )),
        },
        ColumnType::Utf8 if k == Kind::String => serde_json::from_str::<Cow<'_, str>>(raw)
            .map(Cell::Str)
            .map_err(|e| format!("bad string: {e}")),
        // Numbers and booleans in a string column keep their JSON text; so does everything in json.
        ColumnType::Utf8 | ColumnType::Json => Ok(Cell::Str(Cow::Borrowed(raw))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(p: u8, s: u8) -> ColumnType {
        ColumnType::Decimal {
            precision: p,
            scale: s,
        }
    }

    #[test]
    fn pinned_names_parse_and_bad_ones_say_what_is_expected() {
        assert_eq!(parse_type("decimal(18,2)"), Ok(dec(18, 2)));
        assert_eq!(parse_type(" Decimal(38, 0) "), Ok(dec(38, 0)));
        assert_eq!(parse_type("timestamp"), Ok(ColumnType::Timestamp));
        assert_eq!(parse_type("bigint"), Ok(ColumnType::Int64));
        assert_eq!(parse_type("double"), Ok(ColumnType::Double));
        for bad in [
            "decimal(39,2)",
            "decimal(4,5)",
            "decimal(0,0)",
            "decimal(x,1)",
        ] {
            assert!(parse_type(bad).unwrap_err().contains("decimal"), "{bad}");
        }
        let e = parse_type("float").unwrap_err();
        assert!(
            e.contains("`float` is not a column type") && e.contains("bigint"),
            "{e}"
        );
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
        // 0.1 + 0.2 style values stay exact: 0.30000000000000004 is not what was written.
        assert_eq!(rescale(parse_decimal("0.30").unwrap(), 38, 2), Ok(30));
        assert_eq!(rescale(parse_decimal("7").unwrap(), 18, 2), Ok(700));
        assert_eq!(rescale(parse_decimal("7.100").unwrap(), 18, 2), Ok(710));
        assert!(rescale(parse_decimal("7.105").unwrap(), 18, 2).is_err());
        assert!(rescale(parse_decimal("1234567890123456.78").unwrap(), 18, 2).is_ok());
        assert!(rescale(parse_decimal("12345678901234567.8").unwrap(), 18, 2).is_err());
    }

    #[test]
    fn inference_picks_bigint_exact_decimals_strings_and_json() {
        let fold = |vals: &[&str]| vals.iter().fold(None, |t, v| infer(t, v));
        assert_eq!(fold(&["1", "null", "2"]), Some(ColumnType::Int64));
        assert_eq!(fold(&["1", "2.5", "3.25"]), Some(dec(38, 2)));
        assert_eq!(fold(&["2.50", "3"]), Some(dec(38, 2)));
        assert_eq!(fold(&["\"a\"", "null"]), Some(ColumnType::Utf8));
        assert_eq!(fold(&["true"]), Some(ColumnType::Boolean));
        assert_eq!(fold(&["{\"a\":1}", "[1]"]), Some(ColumnType::Json));
        assert_eq!(fold(&["1", "\"x\""]), Some(ColumnType::Utf8));
        assert_eq!(fold(&["null", "null"]), None);
        assert_eq!(fold(&["99999999999999999999"]), Some(dec(38, 0)));
    }

    #[test]
    fn values_that_do_not_fit_their_column_say_why() {
        assert_eq!(convert(ColumnType::Int64, "42"), Ok(Cell::I64(42)));
        assert_eq!(convert(ColumnType::Int64, "null"), Ok(Cell::Null));
        let e = convert(ColumnType::Int64, "\"abc\"").unwrap_err();
        assert!(e.contains("not an integer") && e.contains("bigint"), "{e}");
        assert!(convert(ColumnType::Int64, "2.5").is_err());
        assert!(convert(ColumnType::Int64, "99999999999999999999").is_err());
        assert_eq!(convert(dec(18, 2), "2.5"), Ok(Cell::Dec(250)));
        let e = convert(dec(18, 2), "2.555").unwrap_err();
        assert!(
            e.contains("3 digits after the point") && e.contains("decimal(18,2)"),
            "{e}"
        );
        let e = convert(dec(4, 2), "123.4").unwrap_err();
        assert!(e.contains("more than 4 digits"), "{e}");
        assert!(convert(dec(18, 2), "true").is_err());
        assert_eq!(convert(ColumnType::Boolean, "true"), Ok(Cell::Bool(true)));
        assert!(convert(ColumnType::Boolean, "1").is_err());
        assert_eq!(
            convert(ColumnType::Utf8, "\"a\\\"b\""),
            Ok(Cell::Str("a\"b".into()))
        );
        assert_eq!(convert(ColumnType::Utf8, "12"), Ok(Cell::Str("12".into())));
        assert_eq!(
            convert(ColumnType::Json, "{\"a\": [1]}"),
            Ok(Cell::Str("{\"a\": [1]}".into()))
        );
        assert_eq!(convert(ColumnType::Double, "1e300"), Ok(Cell::F64(1e300)));
        assert_eq!(
            convert(ColumnType::Timestamp, "1700000000000"),
            Ok(Cell::I64(1_700_000_000_000))
        );
        assert!(convert(ColumnType::Timestamp, "\"2023-01-01\"").is_err());
    }
}
