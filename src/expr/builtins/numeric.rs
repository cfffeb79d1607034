//! Numeric functions with Flink's integer semantics: `div` (SQL's `/` between integers, which
//! truncates toward zero and wraps as Java's `long` does), `SIGN` and `TRUNCATE`.

use rust_decimal::Decimal;

use super::super::error::EvalReason;
use super::super::functions::Func;
use super::super::ops::{Blame, OpError, OpResult};
use super::super::value::{canonical, Value};
use super::int_at;

pub(super) fn call<'a>(func: Func, args: &mut [Value<'a>]) -> OpResult<'a> {
    match (func, &args[0]) {
        (Func::Div, Value::Int(a)) => {
            let b = int_at(args, 1, 1);
            if b == 0 {
                return Err(OpError {
                    blame: Blame::Arg(1),
                    reason: EvalReason::DivisionByZero,
                });
            }
            Ok(Value::Int(a.wrapping_div(b)))
        }
        (Func::Sign, Value::Int(a)) => Ok(Value::Int(a.signum())),
        (Func::Sign, Value::Float(f)) => Ok(Value::Float(if *f == 0.0 || f.is_nan() {
            *f
        } else {
            f.signum()
        })),
        // Flink truncates the double's decimal (`BigDecimal.valueOf`): TRUNCATE(0.29, 2) is 0.29.
        (Func::Truncate, Value::Float(f)) => {
            use rust_decimal::prelude::ToPrimitive;
            let digits = int_at(args, 1, 0);
            Ok(Value::Float(match super::super::float::to_decimal(*f) {
                Some(d) => truncate(d, digits).to_f64().unwrap_or(*f),
                None => *f,
            }))
        }
        (Func::Sign, Value::Decimal(d)) => {
            // The input's type (its scale) is kept: SIGN(-7.25) is -1.00.
            let unit = Decimal::new(10_i64.pow(d.scale().min(18)), d.scale().min(18));
            Ok(Value::Decimal(if d.is_zero() {
                canonical(Decimal::new(0, d.scale()))
            } else if d.is_sign_negative() {
                -unit
            } else {
                unit
            }))
        }
        (Func::Truncate, Value::Int(a)) => {
            let digits = int_at(args, 1, 0);
            if digits >= 0 {
                return Ok(Value::Int(*a));
            }
            let unit = 10_i64.checked_pow(digits.unsigned_abs().min(19) as u32);
            Ok(Value::Int(unit.map_or(0, |u| a / u * u)))
        }
        (Func::Truncate, Value::Decimal(d)) => Ok(Value::Decimal(truncate(*d, int_at(args, 1, 0)))),
        _ => Ok(Value::Null),
    }
}

/// `d` cut (toward zero) to `digits` places after the point; a negative `digits` zeroes as many
/// places before it. The scale becomes `digits` where that is smaller than `d`'s.
fn truncate(d: Decimal, digits: i64) -> Decimal {
    if digits >= 0 {
        let digits = digits.min(i64::from(d.scale())) as u32;
        let mut t = d.trunc_with_scale(digits);
        t.rescale(digits);
        return canonical(t);
    }
    let unit = Decimal::from_i128_with_scale(10_i128.pow(digits.unsigned_abs().min(28) as u32), 0);
    canonical(match d.checked_div(unit) {
        Some(q) => q.trunc() * unit,
        None => Decimal::ZERO,
    })
}
