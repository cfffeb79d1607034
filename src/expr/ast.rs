//! The syntax tree produced by `parse`, and the parsing of field paths (the type is the
//! record's, `record::path`).
//!
//! Every node keeps `pos`, the byte offset in the expression text of the place to blame for it:
//! the start of a literal, field or function name, or the operator of a unary, binary, `in` or
//! ternary node. Errors turn it into a line and column.

use rust_decimal::Decimal;

pub use crate::record::path::{FieldPath, Segment};

impl FieldPath {
    /// Parses a path written as in an expression (`left.ts`, `items[0].sku`).
    pub fn parse(text: &str) -> Result<Self, super::ExprError> {
        super::parse::parse_path(text)
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
