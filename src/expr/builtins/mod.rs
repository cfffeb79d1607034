//! Flink's built-in scalar functions beyond the language's core set: string functions
//! (`strings`), digests and encodings (`digest`), numbers (`numeric`) and the calendar
//! (`calendar`: parsing, adding and taking apart timestamps). Each takes its arguments evaluated,
//! checks their types against its [`Spec`], gives null where Flink does (for most, when any
//! argument is null) and then computes.
//!
//! They are called through `Op::Call` with the arguments in a small array on the stack; the
//! functions whose result is fixed-size allocate nothing.

mod calendar;
mod digest;
mod math;
mod numeric;
mod strings;
mod text;

use super::functions::Func;
use super::ops::{type_error, OpResult};
use super::value::Value;

/// What an argument must be (besides null, always accepted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Want {
    Str,
    Int,
    Num,
    /// Epoch milliseconds (an int).
    Time,
    Any,
}

/// What a function's result is, for the static checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ret {
    Str,
    Int,
    /// Like the first argument: an int stays an int, a decimal a decimal.
    AsFirst,
    /// Any of the arguments after the first.
    AsRest,
    /// A DOUBLE (a number to the checker).
    Double,
    Bool,
}

/// The module that computes a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Family {
    Strings,
    Text,
    Digest,
    Numeric,
    Math,
    Calendar,
}

/// A function's arguments (the last repeats for a function of any number of them), result and
/// family.
pub(super) struct Spec {
    pub args: &'static [Want],
    pub ret: Ret,
    /// Null when any argument is null (checked after the types). Otherwise the function decides.
    pub strict: bool,
    pub family: Family,
}

const fn spec(family: Family, args: &'static [Want], ret: Ret) -> Spec {
    Spec {
        args,
        ret,
        strict: true,
        family,
    }
}

/// The spec of `func`, if it is one of these functions.
pub(super) fn spec_of(func: Func) -> Option<Spec> {
    use Family::{Calendar, Digest, Math, Numeric, Strings, Text};
    use Want::{Any, Int, Num, Str, Time};
    Some(match func {
        Func::ConcatWs => Spec {
            strict: false,
            ..spec(Strings, &[Str, Any], Ret::Str)
        },
        Func::Elt => Spec {
            strict: false,
            ..spec(Strings, &[Int, Any], Ret::AsRest)
        },
        Func::Lpad | Func::Rpad => spec(Strings, &[Str, Int, Str], Ret::Str),
        Func::Repeat | Func::Left | Func::Right => spec(Strings, &[Str, Int], Ret::Str),
        Func::Initcap | Func::Reverse => spec(Strings, &[Str], Ret::Str),
        Func::Ltrim | Func::Rtrim | Func::Btrim => spec(Strings, &[Str, Str], Ret::Str),
        Func::Locate => spec(Strings, &[Str, Str, Int], Ret::Int),
        Func::Ascii => spec(Strings, &[Str], Ret::Int),
        Func::Chr => spec(Strings, &[Int], Ret::Str),
        Func::Overlay => spec(Strings, &[Str, Str, Int, Int], Ret::Str),
        Func::ParseUrl => spec(Strings, &[Str, Str, Str], Ret::Str),
        Func::ToBase64 | Func::FromBase64 | Func::UrlEncode | Func::UrlDecode => {
            spec(Digest, &[Str], Ret::Str)
        }
        Func::Hex => spec(Digest, &[Any], Ret::Str),
        Func::Bin => spec(Digest, &[Int], Ret::Str),
        Func::Md5 | Func::Sha1 | Func::Sha224 | Func::Sha256 | Func::Sha384 | Func::Sha512 => {
            spec(Digest, &[Str], Ret::Str)
        }
        Func::Sha2 => spec(Digest, &[Str, Int], Ret::Str),
        Func::Div => spec(Numeric, &[Int, Int], Ret::Int),
        Func::Sign => spec(Numeric, &[Num], Ret::AsFirst),
        Func::Truncate => spec(Numeric, &[Num, Int], Ret::AsFirst),
        Func::ParseTime | Func::UnixTimestamp => spec(Calendar, &[Str, Str], Ret::Int),
        Func::ToDate => spec(Calendar, &[Str, Str], Ret::Str),
        Func::TimeAdd => spec(Calendar, &[Str, Int, Time], Ret::Int),
        Func::TimeDiff => spec(Calendar, &[Str, Time, Time], Ret::Int),
        Func::TimeField | Func::FloorTime | Func::CeilTime => {
            spec(Calendar, &[Time, Str], Ret::Int)
        }
        // NULL only for a NULL string: a NULL `from` changes nothing, a NULL `to` removes.
        Func::Translate => Spec {
            strict: false,
            ..spec(Text, &[Str, Str, Str], Ret::Str)
        },
        // NULL is not alphabetic, digits or a number: false, as Flink.
        Func::IsAlpha | Func::IsDigit | Func::IsDecimal => Spec {
            strict: false,
            ..spec(Text, &[Any], Ret::Bool)
        },
        Func::InetAton => spec(Text, &[Str], Ret::Int),
        Func::InetNtoa => spec(Text, &[Int], Ret::Str),
        Func::JsonQuote | Func::JsonUnquote => spec(Text, &[Str], Ret::Str),
        Func::ToDouble => spec(Math, &[Any], Ret::Double),
        Func::Power | Func::Atan2 | Func::Log => spec(Math, &[Num, Num], Ret::Double),
        Func::Sqrt
        | Func::Exp
        | Func::Ln
        | Func::Log10
        | Func::Log2
        | Func::Sin
        | Func::Cos
        | Func::Tan
        | Func::Cot
        | Func::Asin
        | Func::Acos
        | Func::Atan
        | Func::Sinh
        | Func::Cosh
        | Func::Tanh
        | Func::Degrees
        | Func::Radians => spec(Math, &[Num], Ret::Double),
        _ => return None,
    })
}

/// What argument `i` of a function with `args` must be.
pub(super) fn want_at(args: &[Want], i: usize) -> Want {
    args.get(i).or(args.last()).copied().unwrap_or(Want::Any)
}

fn fits(want: Want, v: &Value<'_>) -> bool {
    matches!(
        (want, v),
        (_, Value::Null)
            | (Want::Any, _)
            | (Want::Str, Value::Str(_))
            | (Want::Int | Want::Time, Value::Int(_))
            | (
                Want::Num,
                Value::Int(_) | Value::Decimal(_) | Value::Float(_)
            )
    )
}

fn expected(want: Want) -> &'static str {
    match want {
        Want::Str => "a string",
        Want::Int => "an int",
        Want::Num => "a number",
        Want::Time => "an int (epoch milliseconds)",
        Want::Any => "a value",
    }
}

/// Calls `func` on `args` (taken out of the slice).
pub(super) fn call<'a>(func: Func, args: &mut [Value<'a>]) -> OpResult<'a> {
    let Some(spec) = spec_of(func) else {
        return Err(type_error(func.name(), 0, "a known function", &Value::Null));
    };
    for (i, v) in args.iter().enumerate() {
        let want = want_at(spec.args, i);
        if !fits(want, v) {
            return Err(type_error(func.name(), i, expected(want), v));
        }
    }
    if spec.strict && args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    match spec.family {
        Family::Strings => strings::call(func, args),
        Family::Text => text::call(func, args),
        Family::Digest => digest::call(func, args),
        Family::Numeric => numeric::call(func, args),
        Family::Math => math::call(func, args),
        Family::Calendar => calendar::call(func, args),
    }
}

/// Argument `i` as a string (the caller has checked it is one).
fn str_at<'s>(args: &'s [Value<'_>], i: usize) -> &'s str {
    match args.get(i) {
        Some(Value::Str(s)) => s,
        _ => "",
    }
}

/// Argument `i` as an int (the caller has checked it is one), or `default` where it is missing.
fn int_at(args: &[Value<'_>], i: usize, default: i64) -> i64 {
    match args.get(i) {
        Some(Value::Int(n)) => *n,
        _ => default,
    }
}

/// The longest string a function builds (`repeat`, `lpad`): a bound so a record cannot make a
/// shard allocate without limit.
const MAX_BUILT: usize = 1 << 24;
