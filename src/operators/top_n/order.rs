//! How Top-N operators order rows, shared by the window Top-N and the Top-N over a whole stream
//! (`rank`): the order fields' values read from the row, compared field by field (descending
//! where asked), a NULL or missing value below every value, and ties on every field broken by
//! the row's bytes, so a ranking is a function of the rows, not of their arrival order. Also the
//! ranked row as written, with its rank field.

use std::cmp::Ordering;

use rust_decimal::Decimal;

use crate::expr::{FieldPath, RawJson, Record, Value};
use crate::operators::rows::trim;

/// An order field's value, owned, in the order ranking compares them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum SortVal {
    Null,
    Bool(bool),
    Num(Decimal),
    Str(String),
}

fn sort_val(v: Value<'_>) -> SortVal {
    match v {
        Value::Null => SortVal::Null,
        Value::Bool(b) => SortVal::Bool(b),
        Value::Int(i) => SortVal::Num(Decimal::from(i)),
        Value::Decimal(d) => SortVal::Num(d),
        // A double orders by its decimal (NaN and the infinities, which have none, last).
        Value::Float(f) => {
            crate::expr::float::to_decimal(f).map_or(SortVal::Str(String::new()), SortVal::Num)
        }
        Value::Str(s) => SortVal::Str(s.into_owned()),
    }
}

/// The order fields, most significant first, each with whether it is descending.
#[derive(Debug, Clone)]
pub struct RowOrder {
    fields: Vec<(FieldPath, bool)>,
}

impl RowOrder {
    pub fn new(fields: &[(FieldPath, bool)]) -> RowOrder {
        RowOrder {
            fields: fields.to_vec(),
        }
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The order fields' values of `row`.
    pub fn key(&self, row: &[u8]) -> Vec<SortVal> {
        let rec = RawJson(row);
        (self.fields.iter())
            .map(|(p, _)| rec.get(p).map_or(SortVal::Null, sort_val))
            .collect()
    }

    /// Whether (`a`, `a_row`) ranks before (`Less`), with or after (`b`, `b_row`).
    pub fn cmp(&self, a: &[SortVal], a_row: &[u8], b: &[SortVal], b_row: &[u8]) -> Ordering {
        (self.cmp_values(a, b)).then_with(|| trim(a_row).cmp(trim(b_row)))
    }

    /// Whether order values `a` rank before (`Less`), with or after `b`.
    pub fn cmp_values(&self, a: &[SortVal], b: &[SortVal]) -> Ordering {
        for (i, (_, desc)) in self.fields.iter().enumerate() {
            let o = a[i].cmp(&b[i]);
            let o = if *desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }
}

/// `,"<rank_field>":`, what [`write_ranked`] adds before a rank.
pub fn rank_prefix(field: &str) -> Vec<u8> {
    let mut p = b",".to_vec();
    crate::expr::write_json_string(field, &mut p);
    p.push(b':');
    p
}

/// `row` as one output line into `line`, with `"<rank_field>":<rank>` added when a rank field
/// is named (`prefix` from [`rank_prefix`]).
pub fn write_ranked(line: &mut Vec<u8>, row: &[u8], prefix: Option<&[u8]>, rank: usize) {
    let row = trim(row);
    line.clear();
    match (prefix, row.strip_suffix(b"}")) {
        (Some(prefix), Some(body)) => {
            line.extend_from_slice(body);
            let empty = trim(body.get(1..).unwrap_or_default()).is_empty();
            line.extend_from_slice(if empty { &prefix[1..] } else { prefix });
            line.extend_from_slice(rank.to_string().as_bytes());
            line.push(b'}');
        }
        _ => line.extend_from_slice(row),
    }
    line.push(b'\n');
}
