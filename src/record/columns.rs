//! The column model of table-shaped sinks (PostgreSQL, Parquet): a result line split into its
//! fields as raw JSON text, the kind of each value, and column types pinned in the config or
//! inferred from the first rows. Values are read from their JSON text, never through a float, so
//! an exact decimal (`2.50`) reaches a NUMERIC or DECIMAL column digit for digit.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// A column's type, as a user pins it (`columns = { spend = "decimal(18,2)" }`) or as the first
/// rows imply it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    BigInt,
    Double,
    /// Exact; `None` precision and scale: unconstrained (PostgreSQL `NUMERIC`).
    Decimal(Option<(u8, u8)>),
    Text,
    Boolean,
    /// Epoch milliseconds written as a UTC timestamp.
    Timestamp,
    /// Nested values, as their JSON text.
    Json,
}

/// What the plan knows of a column of the rows a table-shaped sink writes (a window result's):
/// bounds and counts are integers whatever the first rows hold; sums and averages are typed by
/// the sink (a sum whose first totals happen to be whole must not make an integer column that its
/// later fractions cannot enter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnownColumn {
    Integer,
    Sum,
    Avg,
}

/// The type names `columns` accepts, for messages.
pub const TYPE_NAMES: &str =
    "\"bigint\", \"double\", \"decimal\" or \"decimal(P,S)\", \"text\", \"boolean\", \"timestamp\", \"json\"";

impl ColumnType {
    /// Parses a pinned type name (case-insensitive, SQL spellings accepted).
    pub fn parse(name: &str) -> Result<ColumnType, String> {
        let n = name.trim().to_ascii_lowercase();
        let ty = match n.as_str() {
            "bigint" | "int8" | "long" | "integer" | "int" => ColumnType::BigInt,
            "double" | "double precision" | "float8" | "float" => ColumnType::Double,
            "decimal" | "numeric" => ColumnType::Decimal(None),
            "text" | "string" | "varchar" => ColumnType::Text,
            "boolean" | "bool" => ColumnType::Boolean,
            "timestamp" | "timestamptz" => ColumnType::Timestamp,
            "json" | "jsonb" => ColumnType::Json,
            _ => {
                return parse_decimal(&n).ok_or_else(|| {
                    format!("`{name}` is not a column type; expected one of {TYPE_NAMES}")
                })
            }
        };
        Ok(ty)
    }

    /// The type a first value implies; `None` for null (nothing known yet).
    pub fn of(value: &Value<'_>) -> Option<ColumnType> {
        Some(match value {
            Value::Null => return None,
            Value::Bool(_) => ColumnType::Boolean,
            Value::Int(_) => ColumnType::BigInt,
            Value::Number(_) => ColumnType::Decimal(None),
            Value::Str(_) => ColumnType::Text,
            Value::Nested(_) => ColumnType::Json,
        })
    }

    /// The narrower of two inferred types widened to hold both, if one can.
    fn widen(self, other: ColumnType) -> ColumnType {
        use ColumnType::*;
        match (self, other) {
            (a, b) if a == b => a,
            (BigInt, Decimal(d)) | (Decimal(d), BigInt) => Decimal(d),
            (Json, _) | (_, Json) => Json,
            _ => Text,
        }
    }
}

/// `decimal(P,S)` / `numeric(P,S)` with 1 <= P <= 38 and S <= P.
fn parse_decimal(n: &str) -> Option<ColumnType> {
    let inner = n
        .strip_prefix("decimal")
        .or_else(|| n.strip_prefix("numeric"))?
        .trim()
        .strip_prefix('(')?
        .strip_suffix(')')?;
    let (p, s) = inner.split_once(',').unwrap_or((inner, "0"));
    let (p, s) = (p.trim().parse::<u8>().ok()?, s.trim().parse::<u8>().ok()?);
    (1..=38).contains(&p).then_some(())?;
    (s <= p).then_some(ColumnType::Decimal(Some((p, s))))
}

/// One field's value, borrowed from its line.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    /// An integer's digits (fits no particular width yet).
    Int(&'a str),
    /// A number with a fraction or exponent, as written.
    Number(&'a str),
    Str(String),
    /// An object or array, as its JSON text.
    Nested(&'a str),
}

impl<'a> Value<'a> {
    fn from_raw(raw: &'a RawValue) -> Result<Value<'a>, String> {
        let t = raw.get();
        Ok(match t.as_bytes().first() {
            Some(b'n') => Value::Null,
            Some(b't') => Value::Bool(true),
            Some(b'f') => Value::Bool(false),
            Some(b'"') => Value::Str(serde_json::from_str(t).map_err(|e| e.to_string())?),
            Some(b'{' | b'[') => Value::Nested(t),
            Some(_) if t.bytes().all(|b| b.is_ascii_digit() || b == b'-') => Value::Int(t),
            Some(_) => Value::Number(t),
            None => return Err("an empty value".into()),
        })
    }

    /// The value as text a database parses for a column of `ty`; `None` for null.
    pub fn text(&self) -> Option<std::borrow::Cow<'_, str>> {
        use std::borrow::Cow;
        match self {
            Value::Null => None,
            Value::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
            Value::Int(t) | Value::Number(t) | Value::Nested(t) => Some(Cow::Borrowed(t)),
            Value::Str(s) => Some(Cow::Borrowed(s)),
        }
    }
}

/// A result line's fields in the order written.
pub fn fields(line: &[u8]) -> Result<Vec<(String, Value<'_>)>, String> {
    let text = std::str::from_utf8(line).map_err(|e| format!("not UTF-8: {e}"))?;
    let raw = Fields::parse(text.trim_end())?;
    raw.0
        .into_iter()
        .map(|(k, v)| Ok((k, Value::from_raw(v)?)))
        .collect()
}

/// The elements of a JSON array's text (a nested value), each as its raw value.
pub fn elements(text: &str) -> Result<Vec<Value<'_>>, String> {
    let raw: Vec<&RawValue> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    raw.into_iter().map(Value::from_raw).collect()
}

struct Fields<'a>(Vec<(String, &'a RawValue)>);

impl<'a> Fields<'a> {
    fn parse(text: &'a str) -> Result<Fields<'a>, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        let f = de
            .deserialize_map(FieldsVisitor)
            .map_err(|e| e.to_string())?;
        de.end().map_err(|e| e.to_string())?;
        Ok(f)
    }
}

struct FieldsVisitor;

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = Fields<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
        let mut v = Vec::new();
        while let Some((k, raw)) = map.next_entry::<String, &'de RawValue>()? {
            v.push((k, raw));
        }
        Ok(Fields(v))
    }
}

/// A sink's columns: each name with its type, pinned or inferred.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
}

/// The columns of `rows` (parsed result lines) in first-seen order: `pinned` types first, else the
/// widest kind of the column's non-null values (integers and decimals make a decimal; mixed
/// kinds text); a column null in every row is text.
pub fn infer(rows: &[Vec<(String, Value<'_>)>], pinned: &[(String, ColumnType)]) -> Vec<Column> {
    let mut cols: Vec<(String, Option<ColumnType>)> = Vec::new();
    for row in rows {
        for (name, v) in row {
            let seen = ColumnType::of(v);
            match cols.iter_mut().find(|(n, _)| n == name) {
                Some((_, ty)) => {
                    *ty = match (*ty, seen) {
                        (Some(a), Some(b)) => Some(a.widen(b)),
                        (a, b) => a.or(b),
                    }
                }
                None => cols.push((name.clone(), seen)),
            }
        }
    }
    cols.into_iter()
        .map(|(name, ty)| {
            let pin = pinned.iter().find(|(n, _)| *n == name).map(|(_, t)| *t);
            Column {
                ty: pin.or(ty).unwrap_or(ColumnType::Text),
                name,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_their_exact_text() {
        let f = fields(br#"{"a":"x\"y","n":12,"d":2.50,"e":1e3,"b":true,"z":null,"o":{"k":[1]}}"#)
            .unwrap();
        let want = vec![
            ("a", Value::Str("x\"y".into())),
            ("n", Value::Int("12")),
            ("d", Value::Number("2.50")),
            ("e", Value::Number("1e3")),
            ("b", Value::Bool(true)),
            ("z", Value::Null),
            ("o", Value::Nested(r#"{"k":[1]}"#)),
        ];
        let got: Vec<(&str, Value)> = f.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn malformed_lines_are_errors_not_panics() {
        for bad in [
            &b"{"[..],
            b"[1,2]",
            b"{\"a\":}",
            b"{\"a\":1} x",
            b"\xff",
            b"",
        ] {
            assert!(fields(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn inference_widens_and_pins_win() {
        let lines: Vec<&[u8]> = vec![
            br#"{"k":"a","n":1,"s":3,"m":null,"x":1}"#,
            br#"{"k":"b","n":2,"s":2.5,"m":null,"x":"one"}"#,
        ];
        let rows: Vec<_> = lines.iter().map(|l| fields(l).unwrap()).collect();
        let cols = infer(&rows, &[("n".into(), ColumnType::Double)]);
        let got: Vec<(&str, ColumnType)> = cols.iter().map(|c| (c.name.as_str(), c.ty)).collect();
        assert_eq!(
            got,
            vec![
                ("k", ColumnType::Text),
                ("n", ColumnType::Double),
                ("s", ColumnType::Decimal(None)),
                ("m", ColumnType::Text),
                ("x", ColumnType::Text),
            ]
        );
    }

    #[test]
    fn type_names() {
        assert_eq!(ColumnType::parse("BIGINT"), Ok(ColumnType::BigInt));
        assert_eq!(
            ColumnType::parse("decimal(18, 2)"),
            Ok(ColumnType::Decimal(Some((18, 2))))
        );
        assert_eq!(
            ColumnType::parse("numeric(5)"),
            Ok(ColumnType::Decimal(Some((5, 0))))
        );
        for bad in [
            "decimal(0,0)",
            "decimal(39,2)",
            "decimal(4,5)",
            "decimal(",
            "uuid",
            "",
        ] {
            assert!(ColumnType::parse(bad).is_err(), "{bad}");
        }
    }
}
