//! The syntax tree produced by `parse`, and field paths.
//!
//! Every node keeps `pos`, the byte offset in the expression text of the place to blame for it:
//! the start of a literal, field or function name, or the operator of a unary, binary, `in` or
//! ternary node. Errors turn it into a line and column.

use std::fmt;

use rust_decimal::Decimal;

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

    /// Parses a path written as in an expression (`left.ts`, `items[0].sku`).
    pub fn parse(text: &str) -> Result<Self, super::ExprError> {
        super::parse::parse_path(text)
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    pub(super) fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Expr {
    pub kind: ExprKind,
    pub pos: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum ExprKind {
    Null,
    Bool(bool),
    Int(i64),
    Dec(Decimal),
    Str(String),
    Field(FieldPath),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    In(Box<Expr>, Vec<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}
