//! An Avro value (already resolved to the reader schema) written as the JSON text the engine
//! reads. The mapping is exact: a decimal becomes a JSON number with its scale's digits (never
//! a float), longs stay integers, timestamps stay integers in their unit, bytes and fixed become
//! base64 strings (as Flink's JSON format writes BYTES), an enum its symbol, a union its
//! branch's value, and a map's keys come out sorted so equal records are equal lines.

use apache_avro::schema::{NamesRef, Schema};
use apache_avro::types::Value;

/// Writes `v`, a value of `schema`, as JSON into `out`.
pub fn write(
    v: &Value,
    schema: &Schema,
    names: &NamesRef<'_>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let schema = deref(schema, names)?;
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Int(i) | Value::Date(i) | Value::TimeMillis(i) => int(*i as i64, out),
        Value::Long(i)
        | Value::TimeMicros(i)
        | Value::TimestampMillis(i)
        | Value::TimestampMicros(i)
        | Value::TimestampNanos(i)
        | Value::LocalTimestampMillis(i)
        | Value::LocalTimestampMicros(i)
        | Value::LocalTimestampNanos(i) => int(*i, out),
        // Non-finite floats have no JSON form: serde_json writes them as null.
        Value::Float(f) => json(f, out),
        Value::Double(f) => json(f, out),
        Value::Bytes(b) | Value::Fixed(_, b) => json(&super::base64(b), out),
        Value::String(s) | Value::Enum(_, s) => json(s, out),
        Value::Uuid(u) => json(&u.to_string(), out),
        Value::BigDecimal(d) => out.extend_from_slice(d.to_string().as_bytes()),
        Value::Decimal(d) => {
            let Schema::Decimal(ds) = schema else {
                return Err("a decimal value outside a decimal schema".into());
            };
            let unscaled = num_bigint::BigInt::from(d.clone());
            decimal(&unscaled.to_string(), ds.scale, out);
        }
        Value::Duration(d) => {
            let (m, dd, ms) = (
                u32::from(d.months()),
                u32::from(d.days()),
                u32::from(d.millis()),
            );
            out.extend_from_slice(
                format!("{{\"months\":{m},\"days\":{dd},\"millis\":{ms}}}").as_bytes(),
            );
        }
        Value::Union(i, inner) => {
            let Schema::Union(u) = schema else {
                return Err("a union value outside a union schema".into());
            };
            let branch = u
                .variants()
                .get(*i as usize)
                .ok_or_else(|| format!("union branch {i} is not in the schema"))?;
            write(inner, branch, names, out)?;
        }
        Value::Array(items) => {
            let Schema::Array(a) = schema else {
                return Err("an array value outside an array schema".into());
            };
            out.push(b'[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write(item, &a.items, names, out)?;
            }
            out.push(b']');
        }
        Value::Map(m) => {
            let Schema::Map(ms) = schema else {
                return Err("a map value outside a map schema".into());
            };
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push(b'{');
            for (n, k) in keys.into_iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                json(k, out);
                out.push(b':');
                write(&m[k], &ms.types, names, out)?;
            }
            out.push(b'}');
        }
        Value::Record(fields) => {
            let Schema::Record(rs) = schema else {
                return Err("a record value outside a record schema".into());
            };
            out.push(b'{');
            for (n, (name, value)) in fields.iter().enumerate() {
                let field = rs
                    .lookup
                    .get(name)
                    .and_then(|&i| rs.fields.get(i))
                    .ok_or_else(|| format!("field `{name}` is not in the reader schema"))?;
                if n > 0 {
                    out.push(b',');
                }
                json(name, out);
                out.push(b':');
                write(value, &field.schema, names, out)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// A named type's definition for a reference to it.
pub fn deref<'a>(schema: &'a Schema, names: &'a NamesRef<'_>) -> Result<&'a Schema, String> {
    match schema {
        Schema::Ref { name } => names
            .get(name)
            .copied()
            .ok_or_else(|| format!("the schema names `{name}` but does not define it")),
        s => Ok(s),
    }
}

fn int(i: i64, out: &mut Vec<u8>) {
    out.extend_from_slice(i.to_string().as_bytes());
}

fn json<T: serde::Serialize + ?Sized>(v: &T, out: &mut Vec<u8>) {
    // Serializing a string or a number into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, v);
}

/// The JSON number of an unscaled decimal (`-1234`, scale 2 -> `-12.34`; `5`, scale 3 -> `0.005`).
pub fn decimal(unscaled: &str, scale: usize, out: &mut Vec<u8>) {
    let (neg, digits) = match unscaled.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, unscaled),
    };
    if neg {
        out.push(b'-');
    }
    if scale == 0 {
        out.extend_from_slice(digits.as_bytes());
        return;
    }
    if digits.len() <= scale {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', scale - digits.len()));
        out.extend_from_slice(digits.as_bytes());
    } else {
        let (int, frac) = digits.split_at(digits.len() - scale);
        out.extend_from_slice(int.as_bytes());
        out.push(b'.');
        out.extend_from_slice(frac.as_bytes());
    }
}
