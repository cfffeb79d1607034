//! The core built-in functions' run-time semantics (their names and arities are in `signatures`).
//!
//! Strings: `lower upper len starts_with ends_with contains concat trim substr(s, start[, len])
//! replace(s, from, to) split_index(s, separator, i)` (Flink's SUBSTRING, TRIM, REPLACE and
//! SPLIT_INDEX: characters, not bytes; `substr` from 1, a negative start counting from the end);
//! `regexp regexp_extract regexp_replace` (a literal pattern, see `expr::regex`); math: `abs round floor ceil
//! min max`; time: `truncate_time format_time sql_timestamp date_format(ts_ms, 'yyyy-MM-dd HH:mm')`; casts (SQL's CAST, Flink's rules):
//! `to_int` (decimals truncate toward zero, strings are read trimmed, booleans are 1 and 0),
//! `to_decimal(x, scale)` (rounded half away from zero to the scale, which it keeps) and
//! `to_string` (numbers as written, booleans as TRUE and FALSE); and `coalesce`. All except `coalesce` give null
//! when an argument is null (after checking the types of the others). `concat` accepts numbers and
//! booleans too and writes them as JSON would; `min`/`max` return the first smallest/largest
//! argument unchanged (`max(1, 1.0)` is the int `1`).

use std::borrow::Cow;

use rust_decimal::{Decimal, RoundingStrategy};

use super::error::EvalReason;
use super::ops::{order, type_error, Blame, OpError, OpResult};
use super::time;
use super::value::{canonical, Value};

pub(super) use super::signatures::{lookup, suggest, Func};

fn overflow(op: &'static str) -> OpError {
    OpError {
        blame: Blame::Here,
        reason: EvalReason::IntOverflow { op },
    }
}

/// Functions of one argument.
pub(super) fn call1(func: Func, x: Value<'_>) -> OpResult<'_> {
    let name = func.name();
    match (func, x) {
        (_, Value::Null) => Ok(Value::Null),
        (Func::Lower, Value::Str(s)) => Ok(Value::Str(lower(s))),
        (Func::Upper, Value::Str(s)) => Ok(Value::Str(upper(s))),
        (Func::Len, Value::Str(s)) => Ok(Value::Int(s.chars().count() as i64)),
        (Func::Lower | Func::Upper | Func::Len, other) => {
            Err(type_error(name, 0, "a string", &other))
        }
        (Func::Abs, Value::Int(i)) => i.checked_abs().map(Value::Int).ok_or(overflow(name)),
        (Func::Abs, Value::Decimal(d)) => Ok(Value::Decimal(canonical(d.abs()))),
        (Func::Floor | Func::Ceil | Func::Round, Value::Int(i)) => Ok(Value::Int(i)),
        (Func::Floor, Value::Decimal(d)) => Ok(Value::Decimal(canonical(d.floor()))),
        (Func::Ceil, Value::Decimal(d)) => Ok(Value::Decimal(canonical(d.ceil()))),
        (Func::Round, Value::Decimal(d)) => Ok(Value::Decimal(round(d, 0))),
        (Func::Abs, Value::Float(f)) => Ok(Value::Float(f.abs())),
        (Func::Floor, Value::Float(f)) => Ok(Value::Float(f.floor())),
        (Func::Ceil, Value::Float(f)) => Ok(Value::Float(f.ceil())),
        (Func::Round, Value::Float(f)) => Ok(Value::Float(round_double(f, 0))),
        (Func::FormatTime, Value::Int(ts)) => time::format(ts)
            .map(|text| Value::Str(Cow::Owned(text)))
            .map_err(|reason| OpError {
                blame: Blame::Arg(0),
                reason,
            }),
        (Func::SqlTimestamp, Value::Int(ts)) => time::format_sql(ts)
            .map(|text| Value::Str(Cow::Owned(text)))
            .map_err(|reason| OpError {
                blame: Blame::Arg(0),
                reason,
            }),
        (Func::FormatTime | Func::SqlTimestamp, other) => {
            Err(type_error(name, 0, "an int (epoch milliseconds)", &other))
        }
        (Func::Trim, Value::Str(s)) => Ok(match s {
            Cow::Borrowed(b) => Value::Str(Cow::Borrowed(b.trim_matches(' '))),
            Cow::Owned(o) => Value::Str(Cow::Owned(o.trim_matches(' ').to_string())),
        }),
        (Func::Trim, other) => Err(type_error(name, 0, "a string", &other)),
        (Func::ToInt, x) => to_int(x),
        (Func::ToString, Value::Bool(b)) => Ok(Value::str(if b { "TRUE" } else { "FALSE" })),
        (Func::ToString, Value::Str(s)) => Ok(Value::Str(s)),
        (Func::ToString, other) => Ok(Value::Str(Cow::Owned(other.to_string()))),
        (_, other) => Err(type_error(name, 0, "a number", &other)),
    }
}

fn cast_error(op: &'static str, text: &str, expected: &'static str) -> OpError {
    OpError {
        blame: Blame::Arg(0),
        reason: EvalReason::Cast {
            op,
            text: text.to_string(),
            expected,
        },
    }
}

fn to_int(x: Value<'_>) -> OpResult<'_> {
    match x {
        Value::Int(i) => Ok(Value::Int(i)),
        // Java's `(long) d`: toward zero, NaN as 0, saturating.
        Value::Float(f) => Ok(Value::Int(f as i64)),
        Value::Bool(b) => Ok(Value::Int(i64::from(b))),
        Value::Decimal(d) => i64::try_from(d.trunc())
            .map(Value::Int)
            .map_err(|_| overflow("to_int")),
        Value::Str(s) => s
            .trim()
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| cast_error("to_int", &s, "an integer")),
        Value::Null => Ok(Value::Null),
    }
}

/// `x` as a decimal of `scale` digits after the point.
fn to_decimal(x: Value<'_>, scale: u32) -> OpResult<'_> {
    let d = match x {
        Value::Int(i) => Decimal::from(i),
        Value::Decimal(d) => d,
        Value::Bool(b) => Decimal::from(i64::from(b)),
        Value::Float(f) => super::float::to_decimal(f).ok_or(OpError {
            blame: Blame::Here,
            reason: EvalReason::DecimalOverflow { op: "to_decimal" },
        })?,
        Value::Str(s) => s
            .trim()
            .parse::<Decimal>()
            .map_err(|_| cast_error("to_decimal", &s, "a decimal number"))?,
        Value::Null => return Ok(Value::Null),
    };
    let mut d = d.round_dp_with_strategy(scale, RoundingStrategy::MidpointAwayFromZero);
    d.rescale(scale);
    if d.scale() != scale {
        return Err(OpError {
            blame: Blame::Here,
            reason: EvalReason::DecimalOverflow { op: "to_decimal" },
        });
    }
    Ok(Value::Decimal(canonical(d)))
}

/// Flink's ROUND of a DOUBLE: `BigDecimal.valueOf(d).setScale(digits, HALF_UP).doubleValue()`.
fn round_double(f: f64, digits: u32) -> f64 {
    use rust_decimal::prelude::ToPrimitive;
    match super::float::to_decimal(f) {
        Some(d) => round(d, digits).to_f64().unwrap_or(f),
        None => f,
    }
}

fn round(d: Decimal, digits: u32) -> Decimal {
    canonical(d.round_dp_with_strategy(digits, RoundingStrategy::MidpointAwayFromZero))
}

fn lower(s: Cow<'_, str>) -> Cow<'_, str> {
    if s.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) {
        s
    } else {
        Cow::Owned(s.to_lowercase())
    }
}

fn upper(s: Cow<'_, str>) -> Cow<'_, str> {
    if s.bytes().all(|b| b.is_ascii() && !b.is_ascii_lowercase()) {
        s
    } else {
        Cow::Owned(s.to_uppercase())
    }
}

/// Functions of two arguments.
pub(super) fn call2<'a>(func: Func, x: Value<'a>, y: Value<'a>) -> OpResult<'a> {
    let name = func.name();
    match func {
        Func::StartsWith | Func::EndsWith | Func::Contains => {
            for (arg, v) in [(0, &x), (1, &y)] {
                if !matches!(v, Value::Str(_) | Value::Null) {
                    return Err(type_error(name, arg, "a string", v));
                }
            }
            let (Value::Str(s), Value::Str(p)) = (&x, &y) else {
                return Ok(Value::Null);
            };
            Ok(Value::Bool(match func {
                Func::StartsWith => s.starts_with(p.as_ref()),
                Func::EndsWith => s.ends_with(p.as_ref()),
                _ => s.contains(p.as_ref()),
            }))
        }
        Func::Round => {
            if !matches!(
                x,
                Value::Int(_) | Value::Decimal(_) | Value::Float(_) | Value::Null
            ) {
                return Err(type_error(name, 0, "a number", &x));
            }
            let digits = match y {
                Value::Int(digits) => digits,
                Value::Null => return Ok(Value::Null),
                other => return Err(type_error(name, 1, "an int", &other)),
            };
            if x.is_null() {
                return Ok(Value::Null);
            }
            let Some(digits) = u32::try_from(digits)
                .ok()
                .filter(|d| *d <= Decimal::MAX_SCALE)
            else {
                let reason = EvalReason::RoundDigits(digits);
                return Err(OpError {
                    blame: Blame::Arg(1),
                    reason,
                });
            };
            match x {
                Value::Decimal(d) => Ok(Value::Decimal(round(d, digits))),
                Value::Float(f) => Ok(Value::Float(round_double(f, digits))),
                other => Ok(other),
            }
        }
        Func::DateFormat => {
            if !matches!(x, Value::Int(_) | Value::Null) {
                return Err(type_error(name, 0, "an int (epoch milliseconds)", &x));
            }
            if !matches!(y, Value::Str(_) | Value::Null) {
                return Err(type_error(name, 1, "a string", &y));
            }
            let (Value::Int(ts), Value::Str(p)) = (&x, &y) else {
                return Ok(Value::Null);
            };
            time::date_format(*ts, p)
                .map(|s| Value::Str(Cow::Owned(s)))
                .map_err(|reason| OpError {
                    blame: if matches!(reason, EvalReason::DatePattern(_)) {
                        Blame::Arg(1)
                    } else {
                        Blame::Arg(0)
                    },
                    reason,
                })
        }
        Func::Substr => call3(func, [x, y, Value::Null]),
        Func::ToDecimal => {
            let scale = match y {
                Value::Int(s) => s,
                Value::Null => return Ok(Value::Null),
                other => return Err(type_error(name, 1, "an int", &other)),
            };
            let Some(scale) = u32::try_from(scale)
                .ok()
                .filter(|s| *s <= Decimal::MAX_SCALE)
            else {
                return Err(OpError {
                    blame: Blame::Arg(1),
                    reason: EvalReason::RoundDigits(scale),
                });
            };
            to_decimal(x, scale)
        }
        Func::TruncateTime => {
            if !matches!(x, Value::Int(_) | Value::Null) {
                return Err(type_error(name, 0, "an int (epoch milliseconds)", &x));
            }
            if !matches!(y, Value::Str(_) | Value::Null) {
                return Err(type_error(name, 1, "a string", &y));
            }
            let (Value::Int(ts), Value::Str(unit)) = (&x, &y) else {
                return Ok(Value::Null);
            };
            match time::truncate(*ts, unit) {
                Ok(ts) => Ok(Value::Int(ts)),
                Err(reason @ EvalReason::TimeUnit(_)) => Err(OpError {
                    blame: Blame::Arg(1),
                    reason,
                }),
                Err(reason) => Err(OpError {
                    blame: Blame::Here,
                    reason,
                }),
            }
        }
        // Not reached: `compile` builds two-argument calls only for the functions above.
        _ => Err(OpError {
            blame: Blame::Here,
            reason: EvalReason::Type {
                op: name,
                expected: "one argument",
                found: "two",
            },
        }),
    }
}

/// Functions of three arguments (`substr` with two gets a null length: to the end).
pub(super) fn call3<'a>(func: Func, [x, y, z]: [Value<'a>; 3]) -> OpResult<'a> {
    let name = func.name();
    let want_str = |i: usize, v: &Value<'_>| match v {
        Value::Str(_) | Value::Null => Ok(()),
        other => Err(type_error(name, i, "a string", other)),
    };
    let want_int = |i: usize, v: &Value<'_>| match v {
        Value::Int(_) | Value::Null => Ok(()),
        other => Err(type_error(name, i, "an int", other)),
    };
    match func {
        Func::Substr => {
            want_str(0, &x)?;
            want_int(1, &y)?;
            want_int(2, &z)?;
            let (Value::Str(s), Value::Int(pos)) = (&x, &y) else {
                return Ok(Value::Null);
            };
            let chars = s.chars().count() as i64;
            // Flink's substringSQL: from 1; 0 is 1; a negative start counts from the end.
            let start = match *pos {
                p if p > 0 => p - 1,
                p if p < 0 => (chars + p).max(0),
                _ => 0,
            };
            let len = match z {
                Value::Int(l) => l.max(0),
                _ => i64::MAX,
            };
            let out: String = s
                .chars()
                .skip(start.min(chars) as usize)
                .take(len.min(chars) as usize)
                .collect();
            Ok(Value::Str(Cow::Owned(out)))
        }
        Func::Replace => {
            for (i, v) in [&x, &y, &z].into_iter().enumerate() {
                want_str(i, v)?;
            }
            let (Value::Str(s), Value::Str(from), Value::Str(to)) = (&x, &y, &z) else {
                return Ok(Value::Null);
            };
            if from.is_empty() {
                return Ok(Value::Str(Cow::Owned(s.to_string())));
            }
            Ok(Value::Str(Cow::Owned(s.replace(from.as_ref(), to))))
        }
        Func::SplitIndex => {
            want_str(0, &x)?;
            want_str(1, &y)?;
            want_int(2, &z)?;
            let (Value::Str(s), Value::Str(sep), Value::Int(i)) = (&x, &y, &z) else {
                return Ok(Value::Null);
            };
            if sep.is_empty() || *i < 0 {
                return Ok(Value::Null);
            }
            Ok(s.split(sep.as_ref())
                .nth(*i as usize)
                .map_or(Value::Null, |p| Value::Str(Cow::Owned(p.to_string()))))
        }
        _ => Err(OpError {
            blame: Blame::Here,
            reason: EvalReason::Type {
                op: name,
                expected: "three arguments",
                found: "another number",
            },
        }),
    }
}

/// One step of `min`/`max`: the better of `best` (the earlier arguments' winner, if any) and
/// argument number `arg`, `v`; ties keep `best`. Nulls are skipped here; the caller makes the
/// result null. `best` is never a bool, so errors always blame `arg`.
pub(super) fn extreme_step<'a>(
    is_max: bool,
    best: Option<Value<'a>>,
    v: Value<'a>,
    arg: usize,
) -> Result<Option<Value<'a>>, OpError> {
    let op = if is_max { "max" } else { "min" };
    if let Value::Bool(_) = v {
        return Err(type_error(op, arg, "a number or a string", &v));
    }
    let Some(best) = best else {
        return Ok((!v.is_null()).then_some(v));
    };
    if v.is_null() {
        return Ok(Some(best));
    }
    let better = match order(op, &best, &v, (arg, arg))? {
        Some(ordering) if is_max => ordering.is_lt(),
        Some(ordering) => ordering.is_gt(),
        None => false,
    };
    Ok(Some(if better { v } else { best }))
}

/// Appends argument `v` of `concat` to `out`; false when it is null.
pub(super) fn concat_piece(v: &Value<'_>, out: &mut String) -> bool {
    use std::fmt::Write as _;
    match v {
        Value::Null => return false,
        Value::Str(s) => out.push_str(s),
        // Writing into a String cannot fail.
        other => {
            let _ = write!(out, "{other}");
        }
    }
    true
}
