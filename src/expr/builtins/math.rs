//! DOUBLE functions (Flink's arithmetic functions): `to_double` (SQL's CAST to DOUBLE), `POWER`,
//! `SQRT`, `EXP`, the logarithms, trigonometry, `DEGREES`, `RADIANS`. An argument may be any
//! number; the result is a double (NaN where the math has no value, as `SQRT(-1)`, never an
//! error), from the C library's math, which can differ from Java's `Math` in the last bit.

use super::super::error::EvalReason;
use super::super::functions::Func;
use super::super::ops::{Blame, Num, OpError, OpResult};
use super::super::value::Value;

fn num(v: &Value<'_>) -> f64 {
    match v {
        Value::Int(i) => Num::Int(*i).float(),
        Value::Decimal(d) => Num::Dec(*d).float(),
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

/// `CAST(x AS DOUBLE)`: a number widened, a boolean 1.0 or 0.0, a string read as Java's
/// `Double.parseDouble` reads it (trimmed); other text fails the record.
fn to_double<'a>(v: &Value<'_>) -> OpResult<'a> {
    Ok(Value::Float(match v {
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Str(s) => match s.trim() {
            "NaN" => f64::NAN,
            "Infinity" | "+Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            t if t.bytes().any(|b| b.is_ascii_digit()) && !t.contains(['i', 'I', 'n', 'N']) => t
                .trim_end_matches(['d', 'D', 'f', 'F'])
                .parse::<f64>()
                .map_err(|_| cast_error(s))?,
            _ => return Err(cast_error(s)),
        },
        other => num(other),
    }))
}

fn cast_error(text: &str) -> OpError {
    OpError {
        blame: Blame::Arg(0),
        reason: EvalReason::Cast {
            op: "to_double",
            text: text.to_string(),
            expected: "a number",
        },
    }
}

pub(super) fn call<'a>(func: Func, args: &mut [Value<'a>]) -> OpResult<'a> {
    if func == Func::ToDouble {
        return to_double(&args[0]);
    }
    let x = num(&args[0]);
    let y = args.get(1).map(num);
    Ok(Value::Float(match (func, y) {
        (Func::Power, Some(y)) => x.powf(y),
        (Func::Atan2, Some(y)) => x.atan2(y),
        // LOG(base, x).
        (Func::Log, Some(y)) => y.ln() / x.ln(),
        (Func::Log, None) | (Func::Ln, _) => x.ln(),
        (Func::Log10, _) => x.log10(),
        (Func::Log2, _) => x.ln() / std::f64::consts::LN_2,
        (Func::Sqrt, _) => x.sqrt(),
        (Func::Exp, _) => x.exp(),
        (Func::Sin, _) => x.sin(),
        (Func::Cos, _) => x.cos(),
        (Func::Tan, _) => x.tan(),
        (Func::Cot, _) => 1.0 / x.tan(),
        (Func::Asin, _) => x.asin(),
        (Func::Acos, _) => x.acos(),
        (Func::Atan, _) => x.atan(),
        (Func::Sinh, _) => x.sinh(),
        (Func::Cosh, _) => x.cosh(),
        (Func::Tanh, _) => x.tanh(),
        (Func::Degrees, _) => x.to_degrees(),
        (Func::Radians, _) => x.to_radians(),
        _ => f64::NAN,
    }))
}
