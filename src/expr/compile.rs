//! Lowers a checked syntax tree into a [`Program`]: a tree of `Node`s with fields resolved to
//! slots of [`Program::fields`], functions resolved to enums, calls split by arity, and constant
//! subtrees folded into values (so `price * (1 + 0.2)` multiplies once per event, and `1 / 0`
//! is a compile error instead of a failure on every record).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use super::ast::{BinOp, Expr, ExprKind, FieldPath, UnOp};
use super::check::{self, Type};
use super::error::{ExprError, ExprErrorKind};
use super::eval::eval_const;
use super::functions::{lookup, Func};
use super::parse::parse;
use super::value::Value;

/// A compiled expression. Cheap to evaluate many times; `Send + Sync`, so shards can share one.
pub struct Program {
    pub(super) text: Arc<str>,
    pub(super) root: Node,
    pub(super) fields: Vec<FieldPath>,
    ty: Type,
}

impl Program {
    pub(super) fn compile(text: &str) -> Result<Self, ExprError> {
        let expr = parse(text)?;
        let ty = check::check(text, &expr)?;
        let mut lower = Lower {
            text,
            fields: Vec::new(),
            trying: 0,
        };
        let root = lower.node(&expr)?;
        Ok(Self {
            text: Arc::from(text),
            root,
            fields: lower.fields,
            ty,
        })
    }

    /// The expression text it was compiled from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The distinct field paths the expression reads, in order of first appearance.
    pub fn fields(&self) -> &[FieldPath] {
        &self.fields
    }

    /// The field path when the expression is that field and nothing else (`left.ad_id`).
    pub fn as_field(&self) -> Option<&FieldPath> {
        match self.root.op {
            Op::Field(slot) => self.fields.get(slot),
            _ => None,
        }
    }

    /// The field path when the expression is `sql_timestamp(field)`: a select writes that
    /// column straight from the field's token (see [`super::write_sql_timestamp`]).
    pub fn as_sql_timestamp_of_field(&self) -> Option<&FieldPath> {
        match &self.root.op {
            Op::Call1(Func::SqlTimestamp, arg) => match arg.op {
                Op::Field(slot) => self.fields.get(slot),
                _ => None,
            },
            _ => None,
        }
    }

    /// The static type of the result (see [`Type`]); a filter wants `Bool`, `Null` or `Any`.
    pub fn result_type(&self) -> Type {
        self.ty
    }
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("text", &self.text)
            .field("fields", &self.fields)
            .field("result_type", &self.ty)
            .finish()
    }
}

/// One compiled operation; `pos` is where errors of the operation itself point (its operator),
/// `start` where errors about it as an operand point.
#[derive(Debug)]
pub(super) struct Node {
    pub op: Op,
    pub pos: usize,
    pub start: usize,
}

#[derive(Debug)]
pub(super) enum Op {
    Const(Value<'static>),
    /// Index into `Program::fields`.
    Field(usize),
    Neg(Box<Node>),
    Not(Box<Node>),
    /// `+ - * / %`.
    Arith(BinOp, Box<[Node; 2]>),
    /// `== != < <= > >=`.
    Compare(BinOp, Box<[Node; 2]>),
    And(Box<[Node; 2]>),
    Or(Box<[Node; 2]>),
    /// Condition, then, else.
    Cond(Box<[Node; 3]>),
    In(Box<Node>, Box<[Node]>),
    Coalesce(Box<[Node]>),
    /// `try(x)`: `x`, or null where it fails (SQL's TRY_CAST).
    Try(Box<Node>),
    Concat(Box<[Node]>),
    /// `max` when true, `min` when false.
    Extreme(bool, Box<[Node]>),
    Call1(Func, Box<Node>),
    Call2(Func, Box<[Node; 2]>),
    Call3(Func, Box<[Node; 3]>),
    /// A regular-expression function: its pattern, compiled, and its other arguments.
    Regex(Func, Box<regex::Regex>, Box<[Node]>),
    /// One of Flink's further built-ins (`builtins`) and its arguments.
    Call(Func, Box<[Node]>),
}

impl Node {
    fn children(&self) -> Vec<&Node> {
        match &self.op {
            Op::Const(_) | Op::Field(_) => Vec::new(),
            Op::Neg(x) | Op::Not(x) | Op::Call1(_, x) | Op::Try(x) => vec![x],
            Op::Arith(_, pair)
            | Op::Compare(_, pair)
            | Op::And(pair)
            | Op::Or(pair)
            | Op::Call2(_, pair) => pair.iter().collect(),
            Op::Cond(three) | Op::Call3(_, three) => three.iter().collect(),
            Op::In(x, items) => std::iter::once(&**x).chain(items.iter()).collect(),
            Op::Coalesce(items)
            | Op::Concat(items)
            | Op::Extreme(_, items)
            | Op::Regex(_, _, items)
            | Op::Call(_, items) => items.iter().collect(),
        }
    }
}

struct Lower<'t> {
    text: &'t str,
    fields: Vec<FieldPath>,
    /// Inside `try(..)`: a constant that fails is left to fail (into null) at run time.
    trying: usize,
}

impl Lower<'_> {
    fn slot(&mut self, path: &FieldPath) -> usize {
        match self.fields.iter().position(|p| p == path) {
            Some(slot) => slot,
            None => {
                self.fields.push(path.clone());
                self.fields.len() - 1
            }
        }
    }

    fn nodes(&mut self, exprs: &[Expr]) -> Result<Vec<Node>, ExprError> {
        exprs.iter().map(|e| self.node(e)).collect()
    }

    fn pair(&mut self, a: &Expr, b: &Expr) -> Result<Box<[Node; 2]>, ExprError> {
        Ok(Box::new([self.node(a)?, self.node(b)?]))
    }

    fn node(&mut self, e: &Expr) -> Result<Node, ExprError> {
        let op = match &e.kind {
            ExprKind::Null => Op::Const(Value::Null),
            ExprKind::Bool(b) => Op::Const(Value::Bool(*b)),
            ExprKind::Int(i) => Op::Const(Value::Int(*i)),
            ExprKind::Dec(d) => Op::Const(Value::Decimal(*d)),
            ExprKind::Str(s) => Op::Const(Value::Str(Cow::Owned(s.clone()))),
            ExprKind::Field(path) => Op::Field(self.slot(path)),
            ExprKind::Unary(UnOp::Neg, x) => Op::Neg(Box::new(self.node(x)?)),
            ExprKind::Unary(UnOp::Not, x) => Op::Not(Box::new(self.node(x)?)),
            ExprKind::Binary(op, a, b) => {
                let pair = self.pair(a, b)?;
                match op {
                    BinOp::And => Op::And(pair),
                    BinOp::Or => Op::Or(pair),
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                        Op::Compare(*op, pair)
                    }
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => {
                        Op::Arith(*op, pair)
                    }
                }
            }
            ExprKind::In(x, items) => Op::In(Box::new(self.node(x)?), self.nodes(items)?.into()),
            ExprKind::Cond(c, t, o) => {
                Op::Cond(Box::new([self.node(c)?, self.node(t)?, self.node(o)?]))
            }
            ExprKind::Call(name, args) => self.call(e.pos, name, args)?,
        };
        self.fold(Node {
            op,
            pos: e.pos,
            start: check::start(e),
        })
    }

    fn call(&mut self, pos: usize, name: &str, args: &[Expr]) -> Result<Op, ExprError> {
        // `check` has already reported unknown functions and wrong arities with better messages.
        let Some(signature) = lookup(name) else {
            let message = format!("unknown function `{name}`");
            return Err(ExprError::new(
                ExprErrorKind::UnknownFunction,
                self.text,
                pos,
                message,
            ));
        };
        if super::regex::is_regex(signature.func) {
            return self.regex_call(signature.func, pos, args);
        }
        if signature.func == Func::Try {
            self.trying += 1;
            let node = args.first().map(|a| self.node(a)).transpose();
            self.trying -= 1;
            return Ok(match node? {
                Some(node) => Op::Try(Box::new(node)),
                None => Op::Const(Value::Null),
            });
        }
        let mut nodes = self.nodes(args)?;
        if super::builtins::spec_of(signature.func).is_some() {
            return Ok(Op::Call(signature.func, nodes.into()));
        }
        Ok(match (signature.func, nodes.len()) {
            (Func::Coalesce, _) => Op::Coalesce(nodes.into()),
            (Func::Concat, _) => Op::Concat(nodes.into()),
            (Func::Min, _) => Op::Extreme(false, nodes.into()),
            (Func::Max, _) => Op::Extreme(true, nodes.into()),
            (func, 1) => Op::Call1(func, Box::new(nodes.remove(0))),
            (func, 2) => {
                let b = nodes.remove(1);
                Op::Call2(func, Box::new([nodes.remove(0), b]))
            }
            (func, 3) => {
                let c = nodes.remove(2);
                let b = nodes.remove(1);
                Op::Call3(func, Box::new([nodes.remove(0), b, c]))
            }
            (_, count) => {
                let message = format!("`{name}` does not take {count} arguments");
                return Err(ExprError::new(
                    ExprErrorKind::Arity,
                    self.text,
                    pos,
                    message,
                ));
            }
        })
    }

    /// `regexp*(s, 'pattern'[, x])`: the pattern compiled here, once (`check` has proved it a
    /// literal; refused again here rather than trusted), a bad one refused where it is written.
    fn regex_call(&mut self, func: Func, pos: usize, args: &[Expr]) -> Result<Op, ExprError> {
        let (pattern, at) = match args.get(1) {
            Some(Expr {
                kind: ExprKind::Str(p),
                pos,
            }) => (p, *pos),
            _ => {
                let message = format!("the pattern of `{}` must be a string literal", func.name());
                return Err(ExprError::new(ExprErrorKind::Type, self.text, pos, message));
            }
        };
        let re = super::regex::compile(pattern).map_err(|why| {
            let message = format!("pattern `{pattern}`: {why}");
            ExprError::new(ExprErrorKind::Type, self.text, at, message)
        })?;
        let rest: Vec<Expr> = args
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 1)
            .map(|(_, a)| a.clone())
            .collect();
        Ok(Op::Regex(func, Box::new(re), self.nodes(&rest)?.into()))
    }

    /// Replaces an operation on constants by its value.
    fn fold(&self, node: Node) -> Result<Node, ExprError> {
        let children = node.children();
        if children.is_empty() || !children.iter().all(|c| matches!(c.op, Op::Const(_))) {
            return Ok(node);
        }
        match eval_const(&node) {
            Ok(value) => Ok(Node {
                op: Op::Const(value),
                ..node
            }),
            Err(_) if self.trying > 0 => Ok(node),
            Err(fail) => {
                let message = format!("this constant expression always fails: {}", fail.reason);
                Err(ExprError::new(
                    ExprErrorKind::Constant,
                    self.text,
                    fail.pos,
                    message,
                ))
            }
        }
    }
}
