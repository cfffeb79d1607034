//! Test-only reference evaluator: walks the syntax tree directly, written from the semantics in
//! the module docs and independently of `compile`/`eval`/`ops`/`functions`, as plainly as
//! possible (i128 arithmetic with a range check instead of checked i64 ops, a year-by-year
//! calendar instead of the era formula, its own field lookup on `serde_json::Value`). Only
//! whether it fails matters for errors, so they are plain strings.

use std::cmp::Ordering;

use rust_decimal::Decimal;

use super::reference_calls::call;
use crate::expr::ast::{BinOp, Expr, ExprKind, Segment, UnOp};
use crate::expr::value::Value;

pub(super) type V = Value<'static>;
pub(super) type R = Result<V, String>;

/// Evaluates `e`; a decimal zero never carries a minus sign.
pub(super) fn evaluate(e: &Expr, rec: &serde_json::Value) -> R {
    match evaluate_signed(e, rec)? {
        V::Decimal(d) if d.is_zero() => Ok(V::Decimal(d.abs())),
        other => Ok(other),
    }
}

fn evaluate_signed(e: &Expr, rec: &serde_json::Value) -> R {
    Ok(match &e.kind {
        ExprKind::Null => V::Null,
        ExprKind::Bool(b) => V::Bool(*b),
        ExprKind::Int(i) => V::Int(*i),
        ExprKind::Dec(d) => V::Decimal(*d),
        ExprKind::Str(s) => V::from(s.clone()),
        ExprKind::Field(path) => {
            let mut at = rec;
            for segment in path.segments() {
                let next = match (segment, at) {
                    (Segment::Key(k), serde_json::Value::Object(map)) => map.get(k),
                    (Segment::Index(i), serde_json::Value::Array(items)) => items.get(*i),
                    _ => None,
                };
                match next {
                    Some(v) => at = v,
                    None => return Ok(V::Null),
                }
            }
            match at {
                serde_json::Value::Null => V::Null,
                serde_json::Value::Bool(b) => V::Bool(*b),
                serde_json::Value::String(s) => V::from(s.clone()),
                serde_json::Value::Number(n) => match n.as_i64() {
                    Some(i) => V::Int(i),
                    None => V::Decimal(
                        Decimal::from_str_exact(&n.to_string()).map_err(|e| e.to_string())?,
                    ),
                },
                _ => return Err("not a scalar".into()),
            }
        }
        ExprKind::Unary(UnOp::Neg, x) => match evaluate(x, rec)? {
            V::Null => V::Null,
            V::Int(i) => int(-i128::from(i))?,
            V::Decimal(d) => V::Decimal(Decimal::ZERO - d),
            _ => return Err("neg of non-number".into()),
        },
        ExprKind::Unary(UnOp::Not, x) => match logic(evaluate(x, rec)?)? {
            None => V::Null,
            Some(b) => V::Bool(!b),
        },
        ExprKind::Binary(BinOp::And, a, b) => {
            let l = logic(evaluate(a, rec)?)?;
            if l == Some(false) {
                return Ok(V::Bool(false));
            }
            let r = logic(evaluate(b, rec)?)?;
            if r == Some(false) {
                V::Bool(false)
            } else if l.is_none() || r.is_none() {
                V::Null
            } else {
                V::Bool(true)
            }
        }
        ExprKind::Binary(BinOp::Or, a, b) => {
            let l = logic(evaluate(a, rec)?)?;
            if l == Some(true) {
                return Ok(V::Bool(true));
            }
            let r = logic(evaluate(b, rec)?)?;
            if r == Some(true) {
                V::Bool(true)
            } else if l.is_none() || r.is_none() {
                V::Null
            } else {
                V::Bool(false)
            }
        }
        ExprKind::Binary(op, a, b) => binary(*op, evaluate(a, rec)?, evaluate(b, rec)?)?,
        ExprKind::In(x, items) => {
            let v = evaluate(x, rec)?;
            if v == V::Null {
                return Ok(V::Null);
            }
            let mut result = V::Bool(false);
            for item in items {
                match equals(&v, &evaluate(item, rec)?)? {
                    Some(true) => return Ok(V::Bool(true)),
                    Some(false) => {}
                    None => result = V::Null,
                }
            }
            result
        }
        ExprKind::Cond(c, t, o) => match logic(evaluate(c, rec)?)? {
            Some(true) => evaluate(t, rec)?,
            _ => evaluate(o, rec)?,
        },
        ExprKind::Call(name, args) if name == "coalesce" => {
            for arg in args {
                let v = evaluate(arg, rec)?;
                if v != V::Null {
                    return Ok(v);
                }
            }
            V::Null
        }
        ExprKind::Call(name, args) => {
            let values = args
                .iter()
                .map(|a| evaluate(a, rec))
                .collect::<Result<Vec<_>, _>>()?;
            call(name, values)?
        }
    })
}

pub(super) fn int(i: i128) -> R {
    i64::try_from(i)
        .map(V::Int)
        .map_err(|_| "int overflow".to_string())
}

fn logic(v: V) -> Result<Option<bool>, String> {
    match v {
        V::Null => Ok(None),
        V::Bool(b) => Ok(Some(b)),
        _ => Err("logic on non-bool".into()),
    }
}

pub(super) fn is_number(v: &V) -> bool {
    matches!(v, V::Int(_) | V::Decimal(_))
}

pub(super) fn to_dec(v: &V) -> Decimal {
    match v {
        V::Int(i) => Decimal::from(*i),
        V::Decimal(d) => *d,
        _ => Decimal::ZERO,
    }
}

fn equals(a: &V, b: &V) -> Result<Option<bool>, String> {
    if *a == V::Null || *b == V::Null {
        return Ok(None);
    }
    match (a, b) {
        (V::Bool(x), V::Bool(y)) => Ok(Some(x == y)),
        (V::Str(x), V::Str(y)) => Ok(Some(x == y)),
        _ if is_number(a) && is_number(b) => Ok(Some(to_dec(a) == to_dec(b))),
        _ => Err("incomparable".into()),
    }
}

pub(super) fn ordering(a: &V, b: &V) -> Result<Option<Ordering>, String> {
    if matches!(a, V::Bool(_)) || matches!(b, V::Bool(_)) {
        return Err("ordering bools".into());
    }
    if *a == V::Null || *b == V::Null {
        return Ok(None);
    }
    match (a, b) {
        (V::Str(x), V::Str(y)) => Ok(Some(x.chars().cmp(y.chars()))),
        _ if is_number(a) && is_number(b) => Ok(Some(to_dec(a).cmp(&to_dec(b)))),
        _ => Err("incomparable".into()),
    }
}

fn binary(op: BinOp, a: V, b: V) -> R {
    if matches!(op, BinOp::Eq | BinOp::Ne) {
        return Ok(equals(&a, &b)?.map_or(V::Null, |eq| V::Bool(eq == (op == BinOp::Eq))));
    }
    if matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge) {
        let allowed = match op {
            BinOp::Lt => [Ordering::Less, Ordering::Less],
            BinOp::Le => [Ordering::Less, Ordering::Equal],
            BinOp::Gt => [Ordering::Greater, Ordering::Greater],
            _ => [Ordering::Greater, Ordering::Equal],
        };
        return Ok(ordering(&a, &b)?.map_or(V::Null, |o| V::Bool(allowed.contains(&o))));
    }
    let ok = |v: &V| is_number(v) || *v == V::Null || (op == BinOp::Add && matches!(v, V::Str(_)));
    if !ok(&a) || !ok(&b) {
        return Err("arithmetic type".into());
    }
    if a == V::Null || b == V::Null {
        return Ok(V::Null);
    }
    if let (V::Str(x), V::Str(y)) = (&a, &b) {
        return Ok(V::from(format!("{x}{y}")));
    }
    if !is_number(&a) || !is_number(&b) {
        return Err("string mixed with number".into());
    }
    if matches!(op, BinOp::Div | BinOp::Rem) && to_dec(&b).is_zero() {
        return Err("division by zero".into());
    }
    if let (V::Int(x), V::Int(y)) = (&a, &b) {
        let (x, y) = (i128::from(*x), i128::from(*y));
        return match op {
            BinOp::Add => int(x + y),
            BinOp::Sub => int(x - y),
            BinOp::Mul => int(x * y),
            BinOp::Rem => int(x % y),
            _ if x % y == 0 => int(x / y),
            _ => Decimal::from_i128_with_scale(x, 0)
                .checked_div(Decimal::from_i128_with_scale(y, 0))
                .map(|q| V::Decimal(q.normalize()))
                .ok_or_else(|| "decimal overflow".into()),
        };
    }
    let (x, y) = (to_dec(&a), to_dec(&b));
    let result = match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        // SQL: a product's scale is the operands' scales summed, zero included.
        BinOp::Mul => x.checked_mul(y).map(|p| {
            let mut p = p;
            if p.is_zero() {
                p = Decimal::new(0, (x.scale() + y.scale()).min(28));
            }
            p
        }),
        BinOp::Div => x.checked_div(y).map(|q| q.normalize()),
        _ => x.checked_rem(y),
    };
    result
        .map(V::Decimal)
        .ok_or_else(|| "decimal overflow".into())
}
