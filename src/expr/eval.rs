//! Evaluates a compiled [`Program`] against a [`Record`].
//!
//! A plain recursive walk of the `Node` tree, monomorphised per record type. Values move by value
//! and strings borrow from the record or the program, so numeric and boolean work allocates
//! nothing; only string-building functions (`concat`, `+` on strings, `lower`/`upper` of text that
//! changes, `format_time`) allocate. Errors travel boxed (they are rare, and a small `Result`
//! keeps the hot path fast) and become an [`EvalError`] once, at the top.

use std::borrow::Cow;

use super::ast::FieldPath;
use super::builtins;
use super::compile::{Node, Op, Program};
use super::error::{EvalError, EvalReason};
use super::functions::{call1, call2, call3, concat_piece, extreme_step, Func};
use super::ops::{self, Blame, OpError};
use super::record::Record;
use super::value::Value;

/// Where and why evaluation failed, before it is turned into an [`EvalError`].
#[derive(Debug)]
pub(super) struct Fail {
    pub pos: usize,
    pub field: Option<usize>,
    pub reason: EvalReason,
}

type Eval<'a> = Result<Value<'a>, Box<Fail>>;

impl Program {
    /// Evaluates the expression on `record`. The result may borrow strings from both.
    pub fn eval<'a, R: Record + ?Sized>(&'a self, record: &'a R) -> Result<Value<'a>, EvalError> {
        let ctx = Ctx {
            fields: &self.fields,
            record,
        };
        ctx.eval(&self.root).map_err(|fail| {
            let field = fail.field.and_then(|slot| self.fields.get(slot)).cloned();
            EvalError::new(fail.reason, field, &self.text, fail.pos)
        })
    }
}

/// Evaluates a node whose operands are all constants (for folding at compile time).
pub(super) fn eval_const(node: &Node) -> Result<Value<'static>, Box<Fail>> {
    let ctx = Ctx {
        fields: &[],
        record: &(),
    };
    ctx.eval(node).map(Value::into_owned)
}

struct Ctx<'a, R: ?Sized> {
    fields: &'a [FieldPath],
    record: &'a R,
}

/// The failure for `error` of operation `node` on `operands`.
fn fail(node: &Node, operands: &[&Node], error: OpError) -> Box<Fail> {
    let blamed = match error.blame {
        Blame::Arg(arg) => operands.get(arg).copied(),
        Blame::Here => None,
    };
    Box::new(match blamed {
        Some(operand) => Fail {
            pos: operand.start,
            field: match operand.op {
                Op::Field(slot) => Some(slot),
                _ => None,
            },
            reason: error.reason,
        },
        None => Fail {
            pos: node.pos,
            field: None,
            reason: error.reason,
        },
    })
}

impl<'a, R: Record + ?Sized> Ctx<'a, R> {
    /// `x` as a boolean operand of `op`.
    fn truth(&self, op: &'static str, x: &'a Node) -> Result<Option<bool>, Box<Fail>> {
        let v = self.eval(x)?;
        ops::truth(op, 0, &v).map_err(|e| fail(x, &[x], e))
    }

    fn eval(&self, n: &'a Node) -> Eval<'a> {
        match &n.op {
            Op::Const(v) => Ok(v.borrowed()),
            Op::Field(slot) => match self.fields.get(*slot) {
                Some(path) => self.record.get(path).map_err(|e| {
                    let reason = EvalReason::Record(e);
                    Box::new(Fail {
                        pos: n.start,
                        field: Some(*slot),
                        reason,
                    })
                }),
                None => Ok(Value::Null),
            },
            Op::Neg(x) => {
                let v = self.eval(x)?;
                ops::neg(v).map_err(|e| fail(n, &[x], e))
            }
            Op::Not(x) => Ok(self.truth("!", x)?.map_or(Value::Null, |b| Value::Bool(!b))),
            Op::Arith(op, pair) => {
                let [a, b] = &**pair;
                let (x, y) = (self.eval(a)?, self.eval(b)?);
                ops::arith(*op, x, y).map_err(|e| fail(n, &[a, b], e))
            }
            Op::Compare(op, pair) => {
                let [a, b] = &**pair;
                let (x, y) = (self.eval(a)?, self.eval(b)?);
                ops::compare(*op, &x, &y).map_err(|e| fail(n, &[a, b], e))
            }
            Op::And(pair) => {
                let [a, b] = &**pair;
                let left = self.truth("&&", a)?;
                if left == Some(false) {
                    return Ok(Value::Bool(false));
                }
                Ok(match (left, self.truth("&&", b)?) {
                    (_, Some(false)) => Value::Bool(false),
                    (Some(true), Some(true)) => Value::Bool(true),
                    _ => Value::Null,
                })
            }
            Op::Or(pair) => {
                let [a, b] = &**pair;
                let left = self.truth("||", a)?;
                if left == Some(true) {
                    return Ok(Value::Bool(true));
                }
                Ok(match (left, self.truth("||", b)?) {
                    (_, Some(true)) => Value::Bool(true),
                    (Some(false), Some(false)) => Value::Bool(false),
                    _ => Value::Null,
                })
            }
            Op::Cond(three) => {
                let [cond, then, otherwise] = &**three;
                if self.truth("?:", cond)? == Some(true) {
                    self.eval(then)
                } else {
                    self.eval(otherwise)
                }
            }
            Op::In(x, items) => self.in_list(n, x, items),
            Op::Try(x) => Ok(self.eval(x).unwrap_or(Value::Null)),
            Op::Coalesce(items) => {
                for item in items.iter() {
                    let v = self.eval(item)?;
                    if !v.is_null() {
                        return Ok(v);
                    }
                }
                Ok(Value::Null)
            }
            Op::Concat(items) => {
                let mut out = String::new();
                let mut saw_null = false;
                for item in items.iter() {
                    saw_null |= !concat_piece(&self.eval(item)?, &mut out);
                }
                Ok(if saw_null {
                    Value::Null
                } else {
                    Value::Str(Cow::Owned(out))
                })
            }
            Op::Extreme(is_max, items) => {
                let mut best = None;
                let mut saw_null = false;
                for item in items.iter() {
                    let v = self.eval(item)?;
                    saw_null |= v.is_null();
                    best = extreme_step(*is_max, best, v, 0).map_err(|e| fail(n, &[item], e))?;
                }
                Ok(if saw_null {
                    Value::Null
                } else {
                    best.unwrap_or(Value::Null)
                })
            }
            Op::Call1(func, x) => {
                let v = self.eval(x)?;
                call1(*func, v).map_err(|e| fail(n, &[x], e))
            }
            Op::Call2(func, pair) => {
                let [a, b] = &**pair;
                let (x, y) = (self.eval(a)?, self.eval(b)?);
                call2(*func, x, y).map_err(|e| fail(n, &[a, b], e))
            }
            Op::Regex(func, re, items) => {
                let (s, extra) = match &**items {
                    [s] => (s, None),
                    [s, x, ..] => (s, Some(x)),
                    [] => return Ok(Value::Null),
                };
                let text = self.eval(s)?;
                let extra = match extra {
                    Some(x) => Some(self.eval(x)?),
                    None => None,
                };
                super::regex::call(*func, re, text, extra).map_err(|e| {
                    // Blame by argument as written: the pattern (argument 1) is the call itself.
                    let written: Vec<&Node> =
                        std::iter::once(s).chain([n]).chain(items.get(1)).collect();
                    fail(n, &written, e)
                })
            }
            Op::Call(func, items) => self.builtin(n, *func, items),
            Op::Call3(func, three) => {
                let [a, b, c] = &**three;
                let (x, y, z) = (self.eval(a)?, self.eval(b)?, self.eval(c)?);
                call3(*func, [x, y, z]).map_err(|e| fail(n, &[a, b, c], e))
            }
        }
    }

    /// One of Flink's further built-ins: up to four arguments evaluated into an array on the
    /// stack, more (`concat_ws`, `elt`) into a vector.
    fn builtin(&self, n: &'a Node, func: Func, items: &'a [Node]) -> Eval<'a> {
        let blame = |e| fail(n, &items.iter().collect::<Vec<_>>(), e);
        if items.len() <= 4 {
            let mut vals = [Value::Null, Value::Null, Value::Null, Value::Null];
            for (v, item) in vals.iter_mut().zip(items) {
                *v = self.eval(item)?;
            }
            return builtins::call(func, &mut vals[..items.len()]).map_err(blame);
        }
        let mut vals = Vec::with_capacity(items.len());
        for item in items {
            vals.push(self.eval(item)?);
        }
        builtins::call(func, &mut vals).map_err(blame)
    }

    /// `x in [items]` with SQL's null rules: null when `x` is null (items are then not
    /// evaluated), true on the first equal item, else null if an item was null, else false.
    fn in_list(&self, n: &'a Node, x: &'a Node, items: &'a [Node]) -> Eval<'a> {
        let v = self.eval(x)?;
        if v.is_null() {
            return Ok(Value::Null);
        }
        let mut saw_null = false;
        for item in items {
            let w = self.eval(item)?;
            match ops::equal("in", &v, &w) {
                Ok(Some(true)) => return Ok(Value::Bool(true)),
                Ok(Some(false)) => {}
                Ok(None) => saw_null = true,
                Err(e) => return Err(fail(n, &[x, item], e)),
            }
        }
        Ok(if saw_null {
            Value::Null
        } else {
            Value::Bool(false)
        })
    }
}
