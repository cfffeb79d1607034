//! Result lines to Arrow columns: each NDJSON line is split into its fields as raw JSON values
//! by the shared column model ([`columns`](crate::record::columns): field text as written, so
//! decimals keep every digit), the files' columns are inferred from the first lines where they are
//! not pinned (an exact decimal gets precision 38 and the largest scale seen), and every row is
//! converted cell by cell before any of it is appended, so a value that does not fit its column
//! rejects its whole row (with the reason) and never half of one.

use super::cells::{self, Cell, MAX_PRECISION};
use super::nested::{self, NestedBuilder, Node, Shape};
use crate::record::columns::{self, ColumnType, Value};
use arrow_array::builder::{
    BooleanBuilder, Decimal128Builder, Float64Builder, Int64Builder, StringBuilder,
    TimestampMillisecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::collections::HashMap;
use std::sync::Arc;

/// The metadata key that keeps a column's type in the file (json and text columns are both UTF8
/// in Parquet).
pub const TYPE_KEY: &str = "sluice.type";

/// Reads one line (without its newline) as a JSON object's fields.
pub fn fields(line: &[u8]) -> Result<Vec<(String, Value<'_>)>, String> {
    columns::fields(line).map_err(|e| format!("not a JSON object: {e}"))
}

/// The columns of the sink's files: names, types (with the shape of each nested column stored as
/// a struct or list; `None` for scalars and JSON text), and the Arrow schema built from them.
#[derive(Debug, Clone)]
pub struct Layout {
    pub names: Vec<String>,
    pub types: Vec<ColumnType>,
    pub shapes: Vec<Option<Shape>>,
    pub schema: SchemaRef,
    index: HashMap<String, usize>,
}

impl Layout {
    /// Scalar and JSON-text columns only.
    pub fn new(cols: Vec<(String, ColumnType)>) -> Layout {
        let shapes = vec![None; cols.len()];
        Layout::with_shapes(cols, shapes)
    }

    pub fn with_shapes(cols: Vec<(String, ColumnType)>, shapes: Vec<Option<Shape>>) -> Layout {
        let fields: Vec<Field> = cols
            .iter()
            .zip(&shapes)
            .map(|((n, t), shape)| {
                let meta = HashMap::from([(TYPE_KEY.to_string(), cells::type_name(*t))]);
                let ty = shape
                    .as_ref()
                    .map_or_else(|| arrow_type(*t), Shape::data_type);
                Field::new(n, ty, true).with_metadata(meta)
            })
            .collect();
        let index = cols
            .iter()
            .enumerate()
            .map(|(i, (n, _))| (n.clone(), i))
            .collect();
        let (names, types) = cols.into_iter().unzip();
        Layout {
            names,
            types,
            shapes,
            schema: Arc::new(Schema::new(fields)),
            index,
        }
    }

    /// The layout a file written by this sink was made with (from its Arrow schema), so a resumed
    /// run keeps the columns of the files before it.
    pub fn from_schema(schema: &Schema) -> Option<Layout> {
        let mut shapes = Vec::new();
        let cols = schema
            .fields()
            .iter()
            .map(|f| {
                let t = f
                    .metadata()
                    .get(TYPE_KEY)
                    .and_then(|t| ColumnType::parse(t).ok())?;
                shapes.push(match f.data_type() {
                    DataType::Struct(_) | DataType::List(_) => {
                        Some(Shape::from_data_type(f.data_type())?)
                    }
                    _ => None,
                });
                Some((f.name().clone(), t))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Layout::with_shapes(cols, shapes))
    }

    /// Columns from the first `lines`: pinned types where given, else inferred from the values
    /// (a column only ever null is a string); pinned columns the lines lack come last. `None`
    /// while there is not a single column to be had (no line is an object with a field, and
    /// nothing is pinned): the files' columns are fixed by later lines then.
    pub fn infer(lines: &[u8], pinned: &[(String, ColumnType)]) -> Option<Layout> {
        let rows: Vec<_> = lines
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .filter_map(|l| columns::fields(l).ok())
            .collect();
        let mut cols: Vec<(String, ColumnType)> = columns::infer(&rows, pinned)
            .into_iter()
            .map(|c| (c.name, c.ty))
            .collect();
        for (n, t) in pinned {
            if !cols.iter().any(|(c, _)| c == n) {
                cols.push((n.clone(), *t));
            }
        }
        if cols.is_empty() {
            return None;
        }
        // A Parquet decimal has a fixed scale: the largest the first rows have.
        for (name, ty) in &mut cols {
            if *ty != ColumnType::Decimal(None) {
                continue;
            }
            let scale = rows
                .iter()
                .flat_map(|r| r.iter().filter(|(n, _)| n == name))
                .filter_map(|(_, v)| match v {
                    Value::Int(t) | Value::Number(t) => cells::parse_decimal(t),
                    _ => None,
                })
                .map(|d| d.scale)
                .max()
                .unwrap_or(0);
            *ty = ColumnType::Decimal(Some((MAX_PRECISION, scale.min(38) as u8)));
        }
        // Nested columns as structs and lists where one shape holds them, unless pinned `json`.
        let shapes = cols
            .iter()
            .map(|(name, ty)| {
                let pinned_here = pinned.iter().any(|(n, _)| n == name);
                if *ty != ColumnType::Json || pinned_here {
                    return None;
                }
                Shape::infer(
                    rows.iter()
                        .flat_map(|r| r.iter().filter(|(n, _)| n == name))
                        .map(|(_, v)| v),
                )
            })
            .collect();
        Some(Layout::with_shapes(cols, shapes))
    }

    fn position(&self, i: usize, name: &str) -> Option<usize> {
        if self.names.get(i).is_some_and(|n| n == name) {
            return Some(i);
        }
        self.index.get(name).copied()
    }
}

/// The Arrow type of a scalar column.
pub fn arrow_type(t: ColumnType) -> DataType {
    match t {
        ColumnType::BigInt => DataType::Int64,
        ColumnType::Decimal(_) => {
            let (p, s) = cells::decimal_of(t);
            DataType::Decimal128(p, s as i8)
        }
        ColumnType::Double => DataType::Float64,
        ColumnType::Text | ColumnType::Json => DataType::Utf8,
        ColumnType::Boolean => DataType::Boolean,
        ColumnType::Timestamp => DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
    }
}

/// The builder of one column of a scalar type, or of a nested column.
pub enum Builder {
    I64(Int64Builder),
    Dec(Decimal128Builder),
    F64(Float64Builder),
    Str(StringBuilder),
    Bool(BooleanBuilder),
    Ts(TimestampMillisecondBuilder),
    Nested(Box<NestedBuilder>),
}

impl Builder {
    /// The builder of a column of scalar type `t`.
    pub fn of(t: ColumnType) -> Builder {
        match t {
            ColumnType::BigInt => Builder::I64(Int64Builder::new()),
            ColumnType::Decimal(_) => {
                Builder::Dec(Decimal128Builder::new().with_data_type(arrow_type(t)))
            }
            ColumnType::Double => Builder::F64(Float64Builder::new()),
            ColumnType::Text | ColumnType::Json => Builder::Str(StringBuilder::new()),
            ColumnType::Boolean => Builder::Bool(BooleanBuilder::new()),
            ColumnType::Timestamp => {
                Builder::Ts(TimestampMillisecondBuilder::new().with_timezone("UTC"))
            }
        }
    }

    /// Appends a converted cell (of the builder's own type: `convert` made it for this column).
    pub fn append(&mut self, c: Cell<'_>) {
        match (self, c) {
            (Builder::I64(b), Cell::I64(v)) => b.append_value(v),
            (Builder::Ts(b), Cell::I64(v)) => b.append_value(v),
            (Builder::Dec(b), Cell::Dec(v)) => b.append_value(v),
            (Builder::F64(b), Cell::F64(v)) => b.append_value(v),
            (Builder::Bool(b), Cell::Bool(v)) => b.append_value(v),
            (Builder::Str(b), Cell::Str(v)) => b.append_value(v),
            (Builder::Nested(b), Cell::Nested(n)) => b.append(*n),
            (Builder::I64(b), _) => b.append_null(),
            (Builder::Ts(b), _) => b.append_null(),
            (Builder::Dec(b), _) => b.append_null(),
            (Builder::F64(b), _) => b.append_null(),
            (Builder::Bool(b), _) => b.append_null(),
            (Builder::Str(b), _) => b.append_null(),
            (Builder::Nested(b), _) => b.append(Node::Null),
        }
    }

    /// The column so far as an array; the builder starts over.
    pub fn finish(&mut self) -> Result<ArrayRef, arrow_schema::ArrowError> {
        Ok(match self {
            Builder::I64(b) => Arc::new(b.finish()),
            Builder::Dec(b) => Arc::new(b.finish()),
            Builder::F64(b) => Arc::new(b.finish()),
            Builder::Str(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::Ts(b) => Arc::new(b.finish()),
            Builder::Nested(b) => b.finish()?,
        })
    }
}

/// Rows being gathered into one record batch.
pub struct Batch {
    layout: Arc<Layout>,
    builders: Vec<Builder>,
    pub rows: usize,
}

impl Batch {
    pub fn new(layout: Arc<Layout>) -> Batch {
        let builders = layout
            .types
            .iter()
            .zip(&layout.shapes)
            .map(|(t, shape)| match shape {
                Some(s) => Builder::Nested(Box::new(NestedBuilder::new(s))),
                None => Builder::of(*t),
            })
            .collect();
        Batch {
            layout,
            builders,
            rows: 0,
        }
    }

    /// Appends one line as a row, or says why it cannot be one (naming the column).
    pub fn push(&mut self, line: &[u8]) -> Result<(), String> {
        let f = fields(line)?;
        let l = &self.layout;
        let mut row: Vec<Cell<'_>> = vec![Cell::Null; l.types.len()];
        for (i, (name, raw)) in f.iter().enumerate() {
            let Some(c) = l.position(i, name) else {
                return Err(format!(
                    "field `{name}` is not a column of the files (columns: {})",
                    l.names.join(", ")
                ));
            };
            let cell = match &l.shapes[c] {
                Some(shape) => nested::convert(shape, raw).map(|n| Cell::Nested(Box::new(n))),
                None => cells::convert(l.types[c], raw),
            };
            row[c] = cell.map_err(|why| format!("column `{name}`: {why}"))?;
        }
        for (b, cell) in self.builders.iter_mut().zip(row) {
            b.append(cell);
        }
        self.rows += 1;
        Ok(())
    }

    /// The rows so far as a record batch; the builders start over.
    pub fn take(&mut self) -> Result<RecordBatch, arrow_schema::ArrowError> {
        let arrays = self
            .builders
            .iter_mut()
            .map(Builder::finish)
            .collect::<Result<Vec<ArrayRef>, _>>()?;
        self.rows = 0;
        RecordBatch::try_new(self.layout.schema.clone(), arrays)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Decimal128Array, Int64Array, StringArray};

    #[test]
    fn the_layout_is_inferred_from_the_first_lines_and_pins_win() {
        let lines = b"{\"ad\":\"a\",\"n\":1,\"spend\":2.50,\"x\":null,\"tags\":[1]}\n\
                      {\"ad\":\"b\",\"n\":2,\"spend\":3.125,\"x\":null,\"tags\":null}\n";
        let pinned = vec![
            ("n".to_string(), ColumnType::Timestamp),
            ("extra".to_string(), ColumnType::Boolean),
        ];
        let l = Layout::infer(lines, &pinned).unwrap();
        assert_eq!(l.names, ["ad", "n", "spend", "x", "tags", "extra"]);
        assert_eq!(
            l.types,
            [
                ColumnType::Text,
                ColumnType::Timestamp,
                ColumnType::Decimal(Some((38, 3))),
                ColumnType::Text,
                ColumnType::Json,
                ColumnType::Boolean
            ]
        );
        // `tags` is a list of integers; the scalar columns have no shape.
        let list = Some(Shape::List(Box::new(Shape::Leaf(ColumnType::BigInt))));
        assert_eq!(l.shapes, [None, None, None, None, list.clone(), None]);
        let back = Layout::from_schema(&l.schema).unwrap();
        assert_eq!(
            (back.types, back.shapes),
            (l.types.clone(), l.shapes.clone())
        );
        // Pinned `json`: the text, not a list.
        let as_text = vec![("tags".to_string(), ColumnType::Json)];
        assert_eq!(Layout::infer(lines, &as_text).unwrap().shapes[4], None);
        // No column to be had yet: nothing is fixed.
        assert!(Layout::infer(b"{}\nnot json\n[1]\n", &[]).is_none());
        assert_eq!(
            Layout::infer(b"{}\n", &pinned).unwrap().names,
            ["n", "extra"]
        );
    }

    #[test]
    fn a_row_with_a_value_that_does_not_fit_is_rejected_whole() {
        let l = Arc::new(Layout::new(vec![
            ("k".into(), ColumnType::Text),
            ("n".into(), ColumnType::BigInt),
            ("s".into(), ColumnType::Decimal(Some((18, 2)))),
        ]));
        let mut b = Batch::new(l);
        b.push(br#"{"k":"a\u00e9","n":1,"s":2.50}"#).unwrap();
        let e = b.push(br#"{"k":"b","n":"oops","s":1.00}"#).unwrap_err();
        assert!(
            e.contains("column `n`") && e.contains("not an integer"),
            "{e}"
        );
        let e = b.push(br#"{"k":"c","n":3,"s":1.001}"#).unwrap_err();
        assert!(e.contains("column `s`"), "{e}");
        let e = b.push(br#"{"k":"d","zz":3}"#).unwrap_err();
        assert!(e.contains("field `zz`"), "{e}");
        assert!(b.push(b"[1,2]").is_err());
        assert!(b.push(b"{\"k\":").is_err());
        b.push(br#"{"s":-0.05,"k":null}"#).unwrap();
        assert_eq!(b.rows, 2);
        let batch = b.take().unwrap();
        assert_eq!(batch.num_rows(), 2);
        let k = batch
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(k.value(0), "aé");
        assert!(k.is_null(1));
        let n = batch
            .column(1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!((n.value(0), n.is_null(1)), (1, true));
        let s = batch
            .column(2)
            .as_any()
            .downcast_ref::<Decimal128Array>()
            .unwrap();
        assert_eq!((s.value(0), s.value(1)), (250, -5));
        assert_eq!(b.take().unwrap().num_rows(), 0);
    }
}
