//! Run-time semantics of the operators, on already evaluated operands.
//!
//! Every function checks the types of its non-null operands first (a wrong type is an error even
//! next to a null), then propagates null, then computes with checked arithmetic. Errors say which
//! operand to blame so `eval` can point at it and name the field it came from.

use std::borrow::Cow;
use std::cmp::Ordering;

use rust_decimal::Decimal;

use super::ast::BinOp;
use super::error::EvalReason;
use super::value::{canonical, Value};

/// Which part of an operation an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Blame {
    /// The operand or argument with this index.
    Arg(usize),
    /// The operation itself (overflow).
    Here,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct OpError {
    pub blame: Blame,
    pub reason: EvalReason,
}

pub(super) type OpResult<'a> = Result<Value<'a>, OpError>;

pub(super) fn type_error(
    op: &'static str,
    arg: usize,
    expected: &'static str,
    found: &Value<'_>,
) -> OpError {
    OpError {
        blame: Blame::Arg(arg),
        reason: EvalReason::Type {
            op,
            expected,
            found: found.type_name(),
        },
    }
}

fn here(reason: EvalReason) -> OpError {
    OpError {
        blame: Blame::Here,
        reason,
    }
}

/// A number operand.
#[derive(Clone, Copy, Debug)]
pub(super) enum Num {
    Int(i64),
    Dec(Decimal),
    /// A DOUBLE: with any other number, the arithmetic is a double's, as SQL widens to it.
    Float(f64),
}

impl Num {
    /// The decimal of an int or decimal (a double never reaches here: `numbers` takes it apart).
    fn dec(self) -> Decimal {
        match self {
            Num::Int(i) => Decimal::from(i),
            Num::Dec(d) => d,
            Num::Float(f) => super::float::to_decimal(f).unwrap_or_default(),
        }
    }

    /// The number as a double (Java's widening: an int or decimal to its nearest double).
    pub(super) fn float(self) -> f64 {
        use rust_decimal::prelude::ToPrimitive;
        match self {
            Num::Int(i) => i as f64,
            Num::Dec(d) => d.to_f64().unwrap_or(f64::NAN),
            Num::Float(f) => f,
        }
    }
}

/// `-v`.
pub(super) fn neg(v: Value<'_>) -> OpResult<'_> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Int(i) => i
            .checked_neg()
            .map(Value::Int)
            .ok_or(here(EvalReason::IntOverflow { op: "-" })),
        Value::Decimal(d) => Ok(Value::Decimal(canonical(-d))),
        Value::Float(f) => Ok(Value::Float(-f)),
        other => Err(type_error("-", 0, "a number", &other)),
    }
}

/// A boolean operand of `op`: `None` for null.
pub(super) fn truth(op: &'static str, arg: usize, v: &Value<'_>) -> Result<Option<bool>, OpError> {
    match v {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        other => Err(type_error(op, arg, "a bool", other)),
    }
}

/// `+ - * / %`.
pub(super) fn arith<'a>(op: BinOp, a: Value<'a>, b: Value<'a>) -> OpResult<'a> {
    let symbol = op.symbol();
    let expected = if op == BinOp::Add {
        "a number or a string"
    } else {
        "a number"
    };
    for (arg, v) in [(0, &a), (1, &b)] {
        match v {
            Value::Null | Value::Int(_) | Value::Decimal(_) | Value::Float(_) => {}
            Value::Str(_) if op == BinOp::Add => {}
            other => return Err(type_error(symbol, arg, expected, other)),
        }
    }
    let (x, y) = match (a, b) {
        (Value::Null, _) | (_, Value::Null) => return Ok(Value::Null),
        (Value::Str(x), Value::Str(y)) => return Ok(Value::Str(Cow::Owned(x.into_owned() + &y))),
        (Value::Str(_), other) => return Err(type_error(symbol, 1, "a string", &other)),
        (_, other @ Value::Str(_)) => return Err(type_error(symbol, 1, "a number", &other)),
        (Value::Int(x), Value::Int(y)) => (Num::Int(x), Num::Int(y)),
        (Value::Int(x), Value::Decimal(y)) => (Num::Int(x), Num::Dec(y)),
        (Value::Decimal(x), Value::Int(y)) => (Num::Dec(x), Num::Int(y)),
        (Value::Decimal(x), Value::Decimal(y)) => (Num::Dec(x), Num::Dec(y)),
        (Value::Float(x), y) => (Num::Float(x), as_num(&y).unwrap_or(Num::Float(f64::NAN))),
        (x, Value::Float(y)) => (as_num(&x).unwrap_or(Num::Float(f64::NAN)), Num::Float(y)),
        // Bools were rejected above.
        (x, _) => return Err(type_error(symbol, 0, expected, &x)),
    };
    numbers(op, x, y)
}

fn numbers(op: BinOp, x: Num, y: Num) -> OpResult<'static> {
    let symbol = op.symbol();
    if matches!(x, Num::Float(_)) || matches!(y, Num::Float(_)) {
        return Ok(Value::Float(doubles(op, x.float(), y.float())));
    }
    let zero_divisor = match y {
        Num::Int(y) => y == 0,
        Num::Dec(y) => y.is_zero(),
        Num::Float(_) => false,
    };
    if matches!(op, BinOp::Div | BinOp::Rem) && zero_divisor {
        return Err(OpError {
            blame: Blame::Arg(1),
            reason: EvalReason::DivisionByZero,
        });
    }
    if let (Num::Int(x), Num::Int(y)) = (x, y) {
        let result = match op {
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            // i64::MIN % -1 is mathematically 0; only the hardware instruction overflows.
            BinOp::Rem => Some(x.wrapping_rem(y)),
            BinOp::Div if x.wrapping_rem(y) == 0 => x.checked_div(y),
            // Not a whole number: the exact quotient as a decimal.
            BinOp::Div => return decimals(op, Decimal::from(x), Decimal::from(y)),
            _ => None,
        };
        return result
            .map(Value::Int)
            .ok_or(here(EvalReason::IntOverflow { op: symbol }));
    }
    decimals(op, x.dec(), y.dec())
}

/// IEEE arithmetic, as Java's on doubles: dividing by zero gives an infinity or NaN, not an
/// error.
fn doubles(op: BinOp, x: f64, y: f64) -> f64 {
    match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => x / y,
        _ => x % y,
    }
}

fn decimals(op: BinOp, x: Decimal, y: Decimal) -> OpResult<'static> {
    let result = match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        // A zero product keeps the SQL scale (the operands' scales summed, as for any product):
        // rust_decimal returns a bare 0 for it.
        BinOp::Mul => x.checked_mul(y).map(|d| {
            if d.is_zero() {
                let mut z = Decimal::ZERO;
                // Cannot fail: the scale is at most 28.
                let _ = z.set_scale((x.scale() + y.scale()).min(28));
                z
            } else {
                d
            }
        }),
        // rust_decimal picks the quotient's scale by its own rules (`7 / 2` is `3.50`); drop
        // the trailing zeros so a quotient always reads the same.
        BinOp::Div => x.checked_div(y).map(|q| q.normalize()),
        BinOp::Rem => x.checked_rem(y),
        _ => None,
    };
    result
        .map(|d| Value::Decimal(canonical(d)))
        .ok_or(here(EvalReason::DecimalOverflow { op: op.symbol() }))
}

/// Compares two numbers exactly.
pub(super) fn cmp_numbers(x: Num, y: Num) -> Ordering {
    match (x, y) {
        (Num::Int(x), Num::Int(y)) => x.cmp(&y),
        // With a double, as doubles (Java's `Double.compare`: NaN above everything).
        (Num::Float(_), _) | (_, Num::Float(_)) => {
            let (x, y) = (x.float(), y.float());
            x.partial_cmp(&y).unwrap_or_else(|| x.total_cmp(&y))
        }
        (x, y) => x.dec().cmp(&y.dec()),
    }
}

fn as_num(v: &Value<'_>) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::Int(*i)),
        Value::Decimal(d) => Some(Num::Dec(*d)),
        Value::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

/// `a == b`: `None` when either is null; numbers compare across int and decimal.
pub(super) fn equal(
    op: &'static str,
    a: &Value<'_>,
    b: &Value<'_>,
) -> Result<Option<bool>, OpError> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Ok(None),
        (Value::Bool(x), Value::Bool(y)) => Ok(Some(x == y)),
        (Value::Str(x), Value::Str(y)) => Ok(Some(x == y)),
        // Java's `==` on doubles: NaN equals nothing, itself included.
        (Value::Float(x), _) | (_, Value::Float(x)) if x.is_nan() => Ok(Some(false)),
        _ => match (as_num(a), as_num(b)) {
            (Some(x), Some(y)) => Ok(Some(cmp_numbers(x, y) == Ordering::Equal)),
            _ => Err(incomparable(op, a, b)),
        },
    }
}

fn incomparable(op: &'static str, a: &Value<'_>, b: &Value<'_>) -> OpError {
    OpError {
        blame: Blame::Arg(1),
        reason: EvalReason::Incomparable {
            op,
            left: a.type_name(),
            right: b.type_name(),
        },
    }
}

/// Orders `a` and `b`: numbers with numbers, strings with strings (by code point); `None` when
/// either is null. `args` are the argument indexes to blame for `a` and `b`.
pub(super) fn order(
    op: &'static str,
    a: &Value<'_>,
    b: &Value<'_>,
    args: (usize, usize),
) -> Result<Option<Ordering>, OpError> {
    for (arg, v) in [(args.0, a), (args.1, b)] {
        if let Value::Bool(_) = v {
            return Err(type_error(op, arg, "a number or a string", v));
        }
    }
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Ok(None),
        (Value::Str(x), Value::Str(y)) => Ok(Some(x.as_ref().cmp(y.as_ref()))),
        _ => match (as_num(a), as_num(b)) {
            (Some(x), Some(y)) => Ok(Some(cmp_numbers(x, y))),
            _ => Err(OpError {
                blame: Blame::Arg(args.1),
                ..incomparable(op, a, b)
            }),
        },
    }
}

/// `== != < <= > >=`.
pub(super) fn compare(op: BinOp, a: &Value<'_>, b: &Value<'_>) -> OpResult<'static> {
    let symbol = op.symbol();
    let result = match op {
        BinOp::Eq => equal(symbol, a, b)?,
        BinOp::Ne => equal(symbol, a, b)?.map(|eq| !eq),
        // Java's `<`, `>` on doubles: false with NaN on either side.
        _ if [a, b]
            .iter()
            .any(|v| matches!(v, Value::Float(f) if f.is_nan())) =>
        {
            order(symbol, a, b, (0, 1))?.map(|_| false)
        }
        _ => order(symbol, a, b, (0, 1))?.map(|ordering| match op {
            BinOp::Lt => ordering.is_lt(),
            BinOp::Le => ordering.is_le(),
            BinOp::Gt => ordering.is_gt(),
            _ => ordering.is_ge(),
        }),
    };
    Ok(result.map_or(Value::Null, Value::Bool))
}
