//! Nested values (JSON objects and arrays) as Parquet structs and lists, so a reader queries
//! `user.country` or `tags[1]` instead of parsing JSON text. A column's shape is inferred from the
//! first rows like its type: an object's fields are the union of the fields seen (in first-seen
//! order; a field a row lacks is null there), an array's elements share one shape, leaves are
//! typed like top-level columns (integers BIGINT, fractions exact DECIMAL(38, largest scale),
//! mixed scalar kinds text). Where no single shape holds the first rows (an object in one row, an
//! array or a number in another; an empty object, which Parquet cannot store; a number beyond 38
//! digits) the column stays JSON text, as a column pinned `json` does. Each value is converted
//! whole before anything is appended, so one that does not fit rejects its row, naming the path.

use super::cells::{self, Cell, MAX_PRECISION};
use super::rows::{self, Builder};
use crate::record::columns::{self, ColumnType, Value};
use arrow_array::{ArrayRef, ListArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{ArrowError, DataType, Field, Fields};
use std::sync::Arc;

/// The shape of a nested column.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Leaf(ColumnType),
    Struct(Vec<(String, Shape)>),
    List(Box<Shape>),
}

/// The name Arrow and Parquet readers expect for a list's element.
const ITEM: &str = "item";

impl Shape {
    /// The shape of the non-null `values` of one column, if they are nested and one shape holds
    /// them all (see the module's rules).
    pub fn infer<'v, 'a: 'v>(values: impl Iterator<Item = &'v Value<'a>>) -> Option<Shape> {
        let mut seen = Seen::Nothing;
        for v in values {
            seen = seen.merge(Seen::of(v, 0));
        }
        match seen {
            Seen::Struct(_) | Seen::List(_) => seen.finish(),
            _ => None,
        }
    }

    pub fn data_type(&self) -> DataType {
        match self {
            Shape::Leaf(t) => rows::arrow_type(*t),
            Shape::Struct(fields) => DataType::Struct(struct_fields(fields)),
            Shape::List(item) => DataType::List(Arc::new(Field::new(ITEM, item.data_type(), true))),
        }
    }

    /// The shape a file written by this sink has for a nested column (read back on resume).
    pub fn from_data_type(t: &DataType) -> Option<Shape> {
        Some(match t {
            DataType::Struct(fields) => Shape::Struct(
                fields
                    .iter()
                    .map(|f| Some((f.name().clone(), Shape::from_data_type(f.data_type())?)))
                    .collect::<Option<_>>()?,
            ),
            DataType::List(item) => Shape::List(Box::new(Shape::from_data_type(item.data_type())?)),
            DataType::Int64 => Shape::Leaf(ColumnType::BigInt),
            DataType::Float64 => Shape::Leaf(ColumnType::Double),
            DataType::Boolean => Shape::Leaf(ColumnType::Boolean),
            DataType::Utf8 => Shape::Leaf(ColumnType::Text),
            DataType::Decimal128(p, s) => {
                Shape::Leaf(ColumnType::Decimal(Some((*p, u8::try_from(*s).ok()?))))
            }
            _ => return None,
        })
    }
}

fn struct_fields(fields: &[(String, Shape)]) -> Fields {
    fields
        .iter()
        .map(|(n, s)| Field::new(n, s.data_type(), true))
        .collect()
}

/// What the first rows have shown of a nested column while it is inferred.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    /// Only nulls (or empty arrays) so far: a text leaf if nothing more is learned.
    Nothing,
    Leaf(ColumnType),
    Struct(Vec<(String, Seen)>),
    List(Box<Seen>),
    /// No single shape holds what was seen.
    Mixed,
}

/// Deeper than this a value is kept as JSON text (serde_json refuses deeper input anyway).
const MAX_DEPTH: usize = 64;

impl Seen {
    fn of(v: &Value<'_>, depth: usize) -> Seen {
        match v {
            Value::Null => Seen::Nothing,
            Value::Bool(_) => Seen::Leaf(ColumnType::Boolean),
            Value::Int(_) => Seen::Leaf(ColumnType::BigInt),
            Value::Number(t) => match cells::parse_decimal(t) {
                Some(d) => Seen::Leaf(ColumnType::Decimal(Some((MAX_PRECISION, d.scale as u8)))),
                None => Seen::Mixed,
            },
            Value::Str(_) => Seen::Leaf(ColumnType::Text),
            Value::Nested(_) if depth >= MAX_DEPTH => Seen::Mixed,
            Value::Nested(t) if t.starts_with('{') => match columns::fields(t.as_bytes()) {
                Ok(f) if f.is_empty() => Seen::Mixed,
                Ok(f) => f.iter().fold(Seen::Struct(Vec::new()), |s, (n, v)| {
                    s.merge(Seen::Struct(vec![(n.clone(), Seen::of(v, depth + 1))]))
                }),
                Err(_) => Seen::Mixed,
            },
            Value::Nested(t) => match columns::elements(t) {
                Ok(e) => Seen::List(Box::new(
                    e.iter()
                        .fold(Seen::Nothing, |s, v| s.merge(Seen::of(v, depth + 1))),
                )),
                Err(_) => Seen::Mixed,
            },
        }
    }

    fn merge(self, other: Seen) -> Seen {
        use ColumnType::{BigInt, Decimal, Text};
        match (self, other) {
            (Seen::Nothing, s) | (s, Seen::Nothing) => s,
            (Seen::Mixed, _) | (_, Seen::Mixed) => Seen::Mixed,
            (Seen::Leaf(a), Seen::Leaf(b)) => Seen::Leaf(match (a, b) {
                _ if a == b => a,
                (Decimal(Some((_, x))), Decimal(Some((_, y)))) => {
                    Decimal(Some((MAX_PRECISION, x.max(y))))
                }
                (BigInt, d @ Decimal(_)) | (d @ Decimal(_), BigInt) => d,
                _ => Text,
            }),
            (Seen::Struct(mut a), Seen::Struct(b)) => {
                for (name, s) in b {
                    match a.iter_mut().find(|(n, _)| *n == name) {
                        Some((_, old)) => *old = std::mem::replace(old, Seen::Nothing).merge(s),
                        None => a.push((name, s)),
                    }
                }
                Seen::Struct(a)
            }
            (Seen::List(a), Seen::List(b)) => Seen::List(Box::new(a.merge(*b))),
            _ => Seen::Mixed,
        }
    }

    fn finish(self) -> Option<Shape> {
        Some(match self {
            Seen::Nothing => Shape::Leaf(ColumnType::Text),
            Seen::Leaf(t) => Shape::Leaf(t),
            Seen::Struct(f) => Shape::Struct(
                f.into_iter()
                    .map(|(n, s)| Some((n, s.finish()?)))
                    .collect::<Option<_>>()?,
            ),
            Seen::List(item) => Shape::List(Box::new(item.finish()?)),
            Seen::Mixed => return None,
        })
    }
}

/// One nested value converted for its column, owning its leaves.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Leaf(Cell<'static>),
    /// Children in the order of the struct's fields.
    Struct(Vec<Node>),
    List(Vec<Node>),
}

/// Converts `v` into a value of a `shape` column; `Err` names the path within the value
/// (`.user.tags[2]`) that does not fit, and why.
pub fn convert(shape: &Shape, v: &Value<'_>) -> Result<Node, String> {
    let mut path = String::new();
    convert_at(shape, v, &mut path).map_err(|why| {
        if path.is_empty() {
            why
        } else {
            format!("at `{path}`: {why}")
        }
    })
}

fn convert_at(shape: &Shape, v: &Value<'_>, path: &mut String) -> Result<Node, String> {
    match (shape, v) {
        (_, Value::Null) => Ok(Node::Null),
        (Shape::Leaf(t), v) => Ok(Node::Leaf(cells::convert(*t, v)?.into_owned())),
        (Shape::Struct(fields), Value::Nested(t)) if t.starts_with('{') => {
            let mut out = vec![Node::Null; fields.len()];
            for (name, sub) in columns::fields(t.as_bytes())? {
                let Some(i) = fields.iter().position(|(n, _)| *n == name) else {
                    return Err(format!(
                        "field `{name}` is not in the column's struct (fields: {})",
                        fields
                            .iter()
                            .map(|(n, _)| n.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                };
                let len = path.len();
                path.push('.');
                path.push_str(&name);
                out[i] = convert_at(&fields[i].1, &sub, path)?;
                path.truncate(len);
            }
            Ok(Node::Struct(out))
        }
        (Shape::List(item), Value::Nested(t)) if t.starts_with('[') => {
            let elements = columns::elements(t)?;
            let mut out = Vec::with_capacity(elements.len());
            for (i, e) in elements.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(convert_at(item, e, path)?);
                path.truncate(len);
            }
            Ok(Node::List(out))
        }
        (Shape::Struct(_), _) => Err("not an object; the column is a struct".into()),
        (Shape::List(_), _) => Err("not an array; the column is a list".into()),
    }
}

/// The builder of one nested column (or of a part of one).
pub enum NestedBuilder {
    Leaf(Builder),
    Struct {
        fields: Fields,
        children: Vec<NestedBuilder>,
        valid: Vec<bool>,
    },
    List {
        item: Arc<Field>,
        lengths: Vec<usize>,
        child: Box<NestedBuilder>,
        valid: Vec<bool>,
    },
}

impl NestedBuilder {
    pub fn new(shape: &Shape) -> NestedBuilder {
        match shape {
            Shape::Leaf(t) => NestedBuilder::Leaf(Builder::of(*t)),
            Shape::Struct(f) => NestedBuilder::Struct {
                fields: struct_fields(f),
                children: f.iter().map(|(_, s)| NestedBuilder::new(s)).collect(),
                valid: Vec::new(),
            },
            Shape::List(item) => NestedBuilder::List {
                item: Arc::new(Field::new(ITEM, item.data_type(), true)),
                lengths: Vec::new(),
                child: Box::new(NestedBuilder::new(item)),
                valid: Vec::new(),
            },
        }
    }

    /// Appends a value `convert` made for this builder's shape.
    pub fn append(&mut self, node: Node) {
        match (self, node) {
            (NestedBuilder::Leaf(b), Node::Leaf(c)) => b.append(c),
            (NestedBuilder::Leaf(b), _) => b.append(Cell::Null),
            (
                NestedBuilder::Struct {
                    children, valid, ..
                },
                Node::Struct(values),
            ) => {
                for (c, v) in children.iter_mut().zip(values) {
                    c.append(v);
                }
                valid.push(true);
            }
            (
                NestedBuilder::Struct {
                    children, valid, ..
                },
                _,
            ) => {
                for c in children.iter_mut() {
                    c.append(Node::Null);
                }
                valid.push(false);
            }
            (
                NestedBuilder::List {
                    lengths,
                    child,
                    valid,
                    ..
                },
                Node::List(items),
            ) => {
                lengths.push(items.len());
                for v in items {
                    child.append(v);
                }
                valid.push(true);
            }
            (NestedBuilder::List { lengths, valid, .. }, _) => {
                lengths.push(0);
                valid.push(false);
            }
        }
    }

    /// The values so far as one array; the builder starts over.
    pub fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        Ok(match self {
            NestedBuilder::Leaf(b) => b.finish()?,
            NestedBuilder::Struct {
                fields,
                children,
                valid,
            } => {
                let arrays = children
                    .iter_mut()
                    .map(NestedBuilder::finish)
                    .collect::<Result<Vec<_>, _>>()?;
                let nulls = NullBuffer::from(std::mem::take(valid));
                let len = nulls.len();
                Arc::new(StructArray::try_new_with_length(
                    fields.clone(),
                    arrays,
                    Some(nulls),
                    len,
                )?)
            }
            NestedBuilder::List {
                item,
                lengths,
                child,
                valid,
            } => {
                let offsets = OffsetBuffer::<i32>::try_from_lengths(std::mem::take(lengths))
                    .map_err(|_| {
                        ArrowError::InvalidArgumentError(
                            "a list column holds more than 2^31 elements in one row group".into(),
                        )
                    })?;
                let nulls = NullBuffer::from(std::mem::take(valid));
                let values = child.finish()?;
                Arc::new(ListArray::try_new(
                    item.clone(),
                    offsets,
                    values,
                    Some(nulls),
                )?)
            }
        })
    }
}

#[cfg(test)]
mod tests;
