//! Preparing a writer's value for schema resolution. apache-avro 0.22 refuses to resolve a
//! `bytes` decimal whose datum is shorter than the bytes its precision could need, although
//! writers (Java's among them) write the shortest two's complement: `12.34` at precision 10 is
//! two bytes. Sign-extending such decimals to the length the precision implies first keeps the
//! value and satisfies the check.

use super::to_json::deref;
use apache_avro::schema::{InnerDecimalSchema, NamesRef, Schema};
use apache_avro::types::Value;

/// Sign-extends every bytes-backed decimal in `v` (a value of `schema`) to its precision's length.
pub fn widen_decimals(v: &mut Value, schema: &Schema, names: &NamesRef<'_>) -> Result<(), String> {
    let schema = deref(schema, names)?;
    match (v, schema) {
        (Value::Decimal(d), Schema::Decimal(ds))
            if matches!(ds.inner, InnerDecimalSchema::Bytes) =>
        {
            let bytes = Vec::<u8>::try_from(&*d).map_err(|e| e.to_string())?;
            let need = bytes_for_precision(ds.precision);
            if bytes.len() < need {
                let sign = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
                    0xFF
                } else {
                    0
                };
                let mut wide = vec![sign; need - bytes.len()];
                wide.extend_from_slice(&bytes);
                *d = apache_avro::Decimal::from(wide);
            }
        }
        (Value::Union(i, inner), Schema::Union(u)) => {
            if let Some(branch) = u.variants().get(*i as usize) {
                widen_decimals(inner, branch, names)?;
            }
        }
        (Value::Array(items), Schema::Array(a)) => {
            for item in items {
                widen_decimals(item, &a.items, names)?;
            }
        }
        (Value::Map(m), Schema::Map(ms)) => {
            for item in m.values_mut() {
                widen_decimals(item, &ms.types, names)?;
            }
        }
        (Value::Record(fields), Schema::Record(rs)) => {
            for (f, (_, value)) in rs.fields.iter().zip(fields.iter_mut()) {
                widen_decimals(value, &f.schema, names)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The fewest bytes whose two's complement holds every `precision`-digit value (apache-avro's
/// own rule: floor(log10(2^(8n-1) - 1)) >= precision).
fn bytes_for_precision(precision: usize) -> usize {
    (1..=64)
        .find(|&n| ((2f64.powi(8 * n as i32 - 1) - 1.0).log10().floor() as usize) >= precision)
        .unwrap_or(64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn precision_lengths() {
        assert_eq!(super::bytes_for_precision(2), 1);
        assert_eq!(super::bytes_for_precision(4), 2);
        assert_eq!(super::bytes_for_precision(10), 5);
        assert_eq!(super::bytes_for_precision(38), 16);
    }
}
