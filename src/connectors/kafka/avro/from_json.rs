//! A result line (JSON text) turned into an Avro value of the sink's schema. Values are read
//! from their JSON text, never through a float, so a decimal reaches a `decimal` field digit for
//! digit; a value the schema cannot hold (a fraction with more digits than the scale, a string for
//! a long, a missing field without a default) is an error naming its path, so its row can go to
//! the dead letters.

use super::deref;
use apache_avro::schema::{NamesRef, Schema};
use apache_avro::types::Value;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, HashMap};

/// The Avro value of `raw` (one JSON value) under `schema`; errors name the path (`.a.b`).
pub fn value(
    raw: &RawValue,
    schema: &Schema,
    names: &NamesRef<'_>,
    path: &str,
) -> Result<Value, String> {
    let text = raw.get();
    let schema = deref(schema, names)?;
    let bad = |what: &str| format!("at `{}`: {what}, not {}", show(path), clip(text));
    Ok(match schema {
        Schema::Null if text == "null" => Value::Null,
        Schema::Boolean => match text {
            "true" => Value::Boolean(true),
            "false" => Value::Boolean(false),
            _ => return Err(bad("expected a boolean")),
        },
        Schema::Int => Value::Int(int(text).ok_or_else(|| bad("expected an int"))?),
        Schema::Date => {
            Value::Date(int(text).ok_or_else(|| bad("expected days since 1970 (an int)"))?)
        }
        Schema::TimeMillis => Value::TimeMillis(int(text).ok_or_else(|| bad("expected an int"))?),
        Schema::Long => Value::Long(long(text).ok_or_else(|| bad("expected a long"))?),
        Schema::TimeMicros => Value::TimeMicros(long(text).ok_or_else(|| bad("expected a long"))?),
        Schema::TimestampMillis => {
            Value::TimestampMillis(long(text).ok_or_else(|| bad("expected epoch milliseconds"))?)
        }
        Schema::TimestampMicros => {
            Value::TimestampMicros(long(text).ok_or_else(|| bad("expected epoch microseconds"))?)
        }
        Schema::TimestampNanos => {
            Value::TimestampNanos(long(text).ok_or_else(|| bad("expected epoch nanoseconds"))?)
        }
        Schema::LocalTimestampMillis => {
            Value::LocalTimestampMillis(long(text).ok_or_else(|| bad("expected milliseconds"))?)
        }
        Schema::LocalTimestampMicros => {
            Value::LocalTimestampMicros(long(text).ok_or_else(|| bad("expected microseconds"))?)
        }
        Schema::LocalTimestampNanos => {
            Value::LocalTimestampNanos(long(text).ok_or_else(|| bad("expected nanoseconds"))?)
        }
        Schema::Float => Value::Float(number(text).ok_or_else(|| bad("expected a number"))? as f32),
        Schema::Double => Value::Double(number(text).ok_or_else(|| bad("expected a number"))?),
        Schema::String => Value::String(string(raw).ok_or_else(|| bad("expected a string"))?),
        Schema::Uuid(_) => {
            let s = string(raw).ok_or_else(|| bad("expected a UUID string"))?;
            Value::Uuid(s.parse().map_err(|_| bad("expected a UUID string"))?)
        }
        Schema::Bytes => Value::Bytes(bytes(raw).ok_or_else(|| bad("expected base64 text"))?),
        Schema::Fixed(f) => {
            let b = bytes(raw).ok_or_else(|| bad("expected base64 text"))?;
            if b.len() != f.size {
                return Err(bad(&format!("expected {} bytes", f.size)));
            }
            Value::Fixed(f.size, b)
        }
        Schema::Enum(e) => {
            let s = string(raw).ok_or_else(|| bad("expected an enum symbol"))?;
            let i = e
                .symbols
                .iter()
                .position(|x| *x == s)
                .ok_or_else(|| bad(&format!("expected one of {}", e.symbols.join(", "))))?;
            Value::Enum(i as u32, s)
        }
        Schema::Decimal(d) => {
            let unscaled = unscaled(text, d.scale, d.precision).map_err(|why| bad(&why))?;
            Value::Decimal(apache_avro::Decimal::from(unscaled.to_signed_bytes_be()))
        }
        Schema::Union(u) => {
            let mut why = None;
            for (i, branch) in u.variants().iter().enumerate() {
                let is_null = matches!(branch, Schema::Null);
                if is_null != (text == "null") {
                    continue;
                }
                match value(raw, branch, names, path) {
                    Ok(v) => return Ok(Value::Union(i as u32, Box::new(v))),
                    Err(e) => why = why.or(Some(e)),
                }
            }
            return Err(why.unwrap_or_else(|| bad("no branch of the union holds it")));
        }
        Schema::Array(a) => {
            let items: Vec<&RawValue> =
                serde_json::from_str(text).map_err(|_| bad("expected an array"))?;
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                out.push(value(item, &a.items, names, &format!("{path}[{i}]"))?);
            }
            Value::Array(out)
        }
        Schema::Map(m) => {
            let entries: BTreeMap<String, &RawValue> =
                serde_json::from_str(text).map_err(|_| bad("expected an object"))?;
            let mut out = HashMap::with_capacity(entries.len());
            for (k, v) in entries {
                let item = value(v, &m.types, names, &format!("{path}.{k}"))?;
                out.insert(k, item);
            }
            Value::Map(out)
        }
        Schema::Record(r) => {
            let entries: HashMap<String, &RawValue> =
                serde_json::from_str(text).map_err(|_| bad("expected an object"))?;
            let mut out = Vec::with_capacity(r.fields.len());
            for f in &r.fields {
                let at = format!("{path}.{}", f.name);
                let v = match entries.get(&f.name) {
                    Some(raw) => value(raw, &f.schema, names, &at)?,
                    None => missing(f, names, &at)?,
                };
                out.push((f.name.clone(), v));
            }
            Value::Record(out)
        }
        _ => return Err(bad(&format!("expected a value of Avro type {schema:?}"))),
    })
}

/// A field the row lacks: its schema default, or null where its type allows null.
fn missing(
    f: &apache_avro::schema::RecordField,
    names: &NamesRef<'_>,
    at: &str,
) -> Result<Value, String> {
    if let Some(d) = &f.default {
        // A union's default is a value of its first branch (Avro's rule).
        let (schema, union) = match deref(&f.schema, names)? {
            Schema::Union(u) => (
                deref(u.variants().first().ok_or("an empty union")?, names)?,
                true,
            ),
            s => (s, false),
        };
        let v = match schema {
            // Avro writes these defaults as strings of code points 0-255, one per byte.
            Schema::Bytes | Schema::Fixed(_) | Schema::Decimal(_) => {
                let bytes = code_points(d).map_err(|e| format!("at `{at}`: default: {e}"))?;
                match schema {
                    Schema::Fixed(fx) if bytes.len() != fx.size => {
                        return Err(format!("at `{at}`: the default is not {} bytes", fx.size))
                    }
                    Schema::Fixed(fx) => Value::Fixed(fx.size, bytes),
                    Schema::Decimal(_) => Value::Decimal(apache_avro::Decimal::from(bytes)),
                    _ => Value::Bytes(bytes),
                }
            }
            s => {
                let raw = RawValue::from_string(d.to_string())
                    .map_err(|e| format!("at `{at}`: default: {e}"))?;
                value(&raw, s, names, at)?
            }
        };
        return Ok(if union {
            Value::Union(0, Box::new(v))
        } else {
            v
        });
    }
    let null = RawValue::from_string("null".into()).map_err(|e| e.to_string())?;
    value(&null, &f.schema, names, at)
        .map_err(|_| format!("at `{}`: missing, and the field has no default", show(at)))
}

fn code_points(d: &serde_json::Value) -> Result<Vec<u8>, String> {
    d.as_str()
        .ok_or("a bytes default must be a string")?
        .chars()
        .map(|c| u8::try_from(c as u32).map_err(|_| "a code point above 255".to_string()))
        .collect()
}

fn show(path: &str) -> &str {
    if path.is_empty() {
        "."
    } else {
        path
    }
}

fn clip(text: &str) -> String {
    if text.len() <= 40 {
        return text.to_string();
    }
    let mut end = 40;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

fn long(text: &str) -> Option<i64> {
    text.parse().ok()
}

fn int(text: &str) -> Option<i32> {
    text.parse().ok()
}

fn number(text: &str) -> Option<f64> {
    let first = text.bytes().next()?;
    (first == b'-' || first.is_ascii_digit())
        .then(|| text.parse().ok())
        .flatten()
}

fn string(raw: &RawValue) -> Option<String> {
    raw.get()
        .starts_with('"')
        .then(|| serde_json::from_str(raw.get()).ok())
        .flatten()
}

fn bytes(raw: &RawValue) -> Option<Vec<u8>> {
    super::unbase64(&string(raw)?)
}

/// The unscaled integer of JSON number `text` at `scale`, refusing digits the scale would drop
/// and values beyond `precision` digits.
pub fn unscaled(text: &str, scale: usize, precision: usize) -> Result<num_bigint::BigInt, String> {
    let (neg, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => {
            let e: i64 = rest[i + 1..]
                .parse()
                .map_err(|_| "expected a number".to_string())?;
            // Far beyond any decimal's 76 digits either way; keeps the arithmetic below small.
            if e.abs() > 10_000 {
                return Err(format!("more than {precision} digits"));
            }
            (&rest[..i], e)
        }
        None => (rest, 0),
    };
    if mantissa.len() > 10_000 || scale > 10_000 {
        return Err(format!("more than {precision} digits"));
    }
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return Err("expected a number".into());
    }
    let mut digits = format!("{int}{frac}");
    // The value is digits * 10^(exp - frac.len()); as an unscaled integer at `scale`:
    let shift = exp - frac.len() as i64 + scale as i64;
    if shift >= 0 {
        if shift > 100 {
            return Err(format!("more than {precision} digits"));
        }
        digits.extend(std::iter::repeat_n('0', shift as usize));
    } else {
        let cut = (-shift) as usize;
        let keep = digits.len().saturating_sub(cut);
        if digits[keep..].bytes().any(|b| b != b'0') {
            return Err(format!("more than {scale} digits after the point"));
        }
        digits.truncate(keep);
    }
    let trimmed = digits.trim_start_matches('0');
    if trimmed.len() > precision {
        return Err(format!("more than {precision} digits"));
    }
    let mut n: num_bigint::BigInt = if trimmed.is_empty() {
        0.into()
    } else {
        trimmed
            .parse()
            .map_err(|_| "expected a number".to_string())?
    };
    if neg {
        n = -n;
    }
    Ok(n)
}
