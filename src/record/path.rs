//! Field paths: how a value inside a record is addressed (`payload.items[0].sku`), by every
//! binding, key, aggregate and expression. The text form is parsed by the expression language
//! (`FieldPath::parse`, in `expr`), which owns the syntax of names.

use std::fmt;

/// One step of a [`FieldPath`]: an object key or an array index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A path to a value inside a record, like `payload.items[0].sku`. Always at least one segment,
/// and the first is a key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldPath {
    text: String,
    segments: Vec<Segment>,
}

impl FieldPath {
    /// Builds a path from segments; `None` when `segments` is empty or does not start with a key.
    pub fn new(segments: Vec<Segment>) -> Option<Self> {
        if !matches!(segments.first(), Some(Segment::Key(_))) {
            return None;
        }
        let mut text = String::new();
        for segment in &segments {
            match segment {
                Segment::Key(key) => {
                    if !text.is_empty() {
                        text.push('.');
                    }
                    text.push_str(key);
                }
                Segment::Index(index) => {
                    text.push('[');
                    text.push_str(&index.to_string());
                    text.push(']');
                }
            }
        }
        Some(Self { text, segments })
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The path as it would be written in an expression.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
