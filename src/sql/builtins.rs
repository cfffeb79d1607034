//! Flink's built-in functions that map onto the expression language's `builtins` (string,
//! digest, numeric and calendar functions), each with the type Flink gives its result, and the
//! conditional forms written as expressions (`IF`, `NULLIF`). Calls whose SQL syntax is not a
//! function call (`POSITION(a IN b)`, `OVERLAY`, `TRIM(LEADING ..)`, `FLOOR(ts TO unit)`,
//! `IS DISTINCT FROM`) are translated in `expr`, onto the same functions.

use sqlparser::ast::{Expr, Function, Spanned};

use super::error::SqlError;
use super::expr::{plain_args, translate, Scope};
use super::types::SqlType;

/// The type of a function's result.
#[derive(Clone, Copy)]
enum Out {
    Str,
    Int,
    Bool,
    Double,
    /// The first argument's type (SIGN, TRUNCATE).
    First,
    /// The second argument's type (ELT).
    Second,
    Timestamp,
    Date,
}

/// Flink's name, ours, the arguments it takes (min, max; `None`: any number) and its result.
const MAPPED: &[(&str, &str, usize, Option<usize>, Out)] = &[
    ("CONCAT_WS", "concat_ws", 2, None, Out::Str),
    ("STARTSWITH", "starts_with", 2, Some(2), Out::Bool),
    ("ENDSWITH", "ends_with", 2, Some(2), Out::Bool),
    ("ELT", "elt", 2, None, Out::Second),
    ("LPAD", "lpad", 3, Some(3), Out::Str),
    ("RPAD", "rpad", 3, Some(3), Out::Str),
    ("REPEAT", "repeat", 2, Some(2), Out::Str),
    ("LEFT", "left", 2, Some(2), Out::Str),
    ("RIGHT", "right", 2, Some(2), Out::Str),
    ("REVERSE", "reverse", 1, Some(1), Out::Str),
    ("INITCAP", "initcap", 1, Some(1), Out::Str),
    ("LTRIM", "ltrim", 1, Some(2), Out::Str),
    ("RTRIM", "rtrim", 1, Some(2), Out::Str),
    ("BTRIM", "btrim", 1, Some(2), Out::Str),
    ("LOCATE", "locate", 2, Some(3), Out::Int),
    ("ASCII", "ascii", 1, Some(1), Out::Int),
    ("CHR", "chr", 1, Some(1), Out::Str),
    ("PARSE_URL", "parse_url", 2, Some(3), Out::Str),
    ("MD5", "md5", 1, Some(1), Out::Str),
    ("SHA1", "sha1", 1, Some(1), Out::Str),
    ("SHA224", "sha224", 1, Some(1), Out::Str),
    ("SHA256", "sha256", 1, Some(1), Out::Str),
    ("SHA384", "sha384", 1, Some(1), Out::Str),
    ("SHA512", "sha512", 1, Some(1), Out::Str),
    ("SHA2", "sha2", 2, Some(2), Out::Str),
    ("TO_BASE64", "to_base64", 1, Some(1), Out::Str),
    ("FROM_BASE64", "from_base64", 1, Some(1), Out::Str),
    ("URL_ENCODE", "url_encode", 1, Some(1), Out::Str),
    ("URL_DECODE", "url_decode", 1, Some(1), Out::Str),
    ("HEX", "hex", 1, Some(1), Out::Str),
    ("BIN", "bin", 1, Some(1), Out::Str),
    ("SIGN", "sign", 1, Some(1), Out::First),
    ("TO_TIMESTAMP", "parse_time", 1, Some(2), Out::Timestamp),
    ("TO_DATE", "to_date", 1, Some(2), Out::Date),
    ("TRANSLATE", "translate", 3, Some(3), Out::Str),
    ("IS_ALPHA", "is_alpha", 1, Some(1), Out::Bool),
    ("IS_DIGIT", "is_digit", 1, Some(1), Out::Bool),
    ("IS_DECIMAL", "is_decimal", 1, Some(1), Out::Bool),
    ("INET_ATON", "inet_aton", 1, Some(1), Out::Int),
    ("INET_NTOA", "inet_ntoa", 1, Some(1), Out::Str),
    ("JSON_QUOTE", "json_quote", 1, Some(1), Out::Str),
    ("JSON_UNQUOTE", "json_unquote", 1, Some(1), Out::Str),
    ("POWER", "power", 2, Some(2), Out::Double),
    ("SQRT", "sqrt", 1, Some(1), Out::Double),
    ("EXP", "exp", 1, Some(1), Out::Double),
    ("LN", "ln", 1, Some(1), Out::Double),
    ("LOG", "log", 1, Some(2), Out::Double),
    ("LOG10", "log10", 1, Some(1), Out::Double),
    ("LOG2", "log2", 1, Some(1), Out::Double),
    ("SIN", "sin", 1, Some(1), Out::Double),
    ("COS", "cos", 1, Some(1), Out::Double),
    ("TAN", "tan", 1, Some(1), Out::Double),
    ("COT", "cot", 1, Some(1), Out::Double),
    ("ASIN", "asin", 1, Some(1), Out::Double),
    ("ACOS", "acos", 1, Some(1), Out::Double),
    ("ATAN", "atan", 1, Some(1), Out::Double),
    ("ATAN2", "atan2", 2, Some(2), Out::Double),
    ("SINH", "sinh", 1, Some(1), Out::Double),
    ("COSH", "cosh", 1, Some(1), Out::Double),
    ("TANH", "tanh", 1, Some(1), Out::Double),
    ("DEGREES", "degrees", 1, Some(1), Out::Double),
    ("RADIANS", "radians", 1, Some(1), Out::Double),
];

/// The functions this module knows, for the list of supported ones in errors.
pub(super) fn names() -> impl Iterator<Item = &'static str> {
    MAPPED.iter().map(|m| m.0).chain([
        "IF",
        "NULLIF",
        "PI",
        "E",
        "INSTR",
        "TRUNCATE",
        "UNIX_TIMESTAMP",
        "FROM_UNIXTIME",
        "TIMESTAMPADD",
        "TIMESTAMPDIFF",
        "DAYOFWEEK",
        "DAYOFYEAR",
        "QUARTER",
        "WEEK",
    ])
}

type Found = Option<(String, SqlType)>;

/// `name(args)` if it is one of these functions.
pub(super) fn function(
    name: &str,
    f: &Function,
    e: &Expr,
    scope: &mut dyn Scope,
) -> Result<Found, SqlError> {
    if let Some(found) = special(name, f, e, scope)? {
        return Ok(Some(found));
    }
    let Some(&(_, ours, min, max, out)) = MAPPED.iter().find(|m| m.0 == name) else {
        return Ok(None);
    };
    let args = plain_args(f, e)?;
    if args.len() < min || max.is_some_and(|m| args.len() > m) {
        let wanted = match max {
            Some(m) if m == min => format!("{m}"),
            Some(m) => format!("{min} to {m}"),
            None => format!("at least {min}"),
        };
        return Err(SqlError::span(
            e.span(),
            format!("{name} takes {wanted} arguments, got {}", args.len()),
        ));
    }
    let (texts, types) = translated(&args, scope)?;
    let ty = match out {
        Out::Str => SqlType::String,
        Out::Int => SqlType::Integer,
        Out::Bool => SqlType::Boolean,
        Out::Double => SqlType::Float,
        Out::First => types[0].clone(),
        Out::Second => types[1].clone(),
        Out::Timestamp => SqlType::Timestamp,
        Out::Date => SqlType::Other("DATE".into()),
    };
    Ok(Some((format!("{ours}({})", texts.join(", ")), ty)))
}

fn translated(
    args: &[&Expr],
    scope: &mut dyn Scope,
) -> Result<(Vec<String>, Vec<SqlType>), SqlError> {
    let mut texts = Vec::with_capacity(args.len());
    let mut types = Vec::with_capacity(args.len());
    for a in args {
        let (t, ty) = translate(a, scope)?;
        texts.push(t);
        types.push(ty);
    }
    Ok((texts, types))
}

/// `n` arguments of `name`, or an error saying what it takes.
fn exactly<'f>(
    name: &str,
    f: &'f Function,
    e: &Expr,
    n: std::ops::RangeInclusive<usize>,
    what: &str,
) -> Result<Vec<&'f Expr>, SqlError> {
    let args = plain_args(f, e)?;
    if !n.contains(&args.len()) {
        return Err(SqlError::span(e.span(), format!("{name} takes {what}")));
    }
    Ok(args)
}

/// A time unit written as a word (`TIMESTAMPADD(MONTH, ..)`) or a string.
fn unit(arg: &Expr) -> Result<String, SqlError> {
    let word = match arg {
        Expr::Identifier(id) => id.value.to_ascii_uppercase(),
        Expr::Value(v) => match &v.value {
            sqlparser::ast::Value::SingleQuotedString(s) => s.to_ascii_uppercase(),
            _ => String::new(),
        },
        _ => String::new(),
    };
    let word = word.strip_prefix("SQL_TSI_").unwrap_or(&word).to_string();
    match word.as_str() {
        "SECOND" | "MINUTE" | "HOUR" | "DAY" | "WEEK" | "MONTH" | "QUARTER" | "YEAR" => Ok(word),
        _ => Err(SqlError::span(
            arg.span(),
            "expected a time unit: SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR",
        )),
    }
}

fn special(name: &str, f: &Function, e: &Expr, scope: &mut dyn Scope) -> Result<Found, SqlError> {
    Ok(Some(match name {
        "IF" => {
            let args = exactly(name, f, e, 3..=3, "a condition and two values")?;
            let (t, ty) = translated(&args, scope)?;
            let ty = if t[1] == "null" {
                ty[2].clone()
            } else {
                ty[1].clone()
            };
            (
                format!("(coalesce({}, false) ? ({}) : ({}))", t[0], t[1], t[2]),
                ty,
            )
        }
        "NULLIF" => {
            let args = exactly(name, f, e, 2..=2, "two values")?;
            let (t, ty) = translated(&args, scope)?;
            let text = format!(
                "(coalesce(({0}) == ({1}), false) ? null : ({0}))",
                t[0], t[1]
            );
            (text, ty[0].clone())
        }
        // Java's Math.PI and Math.E, as DOUBLEs.
        "PI" | "E" => {
            exactly(name, f, e, 0..=0, "no arguments")?;
            let digits = if name == "PI" {
                "3.141592653589793"
            } else {
                "2.718281828459045"
            };
            (format!("to_double(\"{digits}\")"), SqlType::Float)
        }
        "INSTR" => {
            let args = exactly(name, f, e, 2..=2, "a string and the string to find in it")?;
            let (t, _) = translated(&args, scope)?;
            (format!("locate({}, {})", t[1], t[0]), SqlType::Integer)
        }
        "TRUNCATE" => {
            let args = exactly(name, f, e, 1..=2, "a number and the digits to keep")?;
            let (t, ty) = translated(&args, scope)?;
            let digits = args.get(1).map(|d| d.to_string());
            let ty = match (&ty[0], digits.as_deref().map(str::parse::<u32>)) {
                (SqlType::Decimal { precision, scale }, Some(Ok(d))) => SqlType::Decimal {
                    precision: *precision,
                    scale: d.min(*scale),
                },
                (SqlType::Decimal { precision, .. }, None) => SqlType::Decimal {
                    precision: *precision,
                    scale: 0,
                },
                (other, _) => other.clone(),
            };
            (format!("truncate({})", t.join(", ")), ty)
        }
        "UNIX_TIMESTAMP" => {
            let args = plain_args(f, e)?;
            if args.is_empty() {
                return Err(SqlError::span(e.span(), "UNIX_TIMESTAMP() without arguments is the time the record is processed, which would make results depend on when a job runs: not supported; pass a string (and a format) or use the record's time attribute"));
            }
            let args = exactly(name, f, e, 1..=2, "a string and optionally its format")?;
            let (t, _) = translated(&args, scope)?;
            (
                format!("unix_timestamp({})", t.join(", ")),
                SqlType::Integer,
            )
        }
        "FROM_UNIXTIME" => {
            let args = exactly(name, f, e, 1..=2, "epoch seconds and optionally a format")?;
            let (t, _) = translated(&args, scope)?;
            let fmt = t
                .get(1)
                .cloned()
                .unwrap_or_else(|| "\"yyyy-MM-dd HH:mm:ss\"".into());
            (
                format!("date_format(({}) * 1000, {fmt})", t[0]),
                SqlType::String,
            )
        }
        "TIMESTAMPADD" => {
            let args = exactly(name, f, e, 3..=3, "a unit, a count and a timestamp")?;
            let u = unit(args[0])?;
            let (t, ty) = translated(&args[1..], scope)?;
            time_arg(args[2], &ty[1])?;
            (
                format!("time_add(\"{u}\", {}, {})", t[0], t[1]),
                ty[1].clone(),
            )
        }
        "TIMESTAMPDIFF" => {
            let args = exactly(name, f, e, 3..=3, "a unit and two timestamps")?;
            let u = unit(args[0])?;
            let (t, ty) = translated(&args[1..], scope)?;
            time_arg(args[1], &ty[0])?;
            time_arg(args[2], &ty[1])?;
            (
                format!("time_diff(\"{u}\", {}, {})", t[0], t[1]),
                SqlType::Integer,
            )
        }
        "DAYOFWEEK" | "DAYOFYEAR" | "QUARTER" | "WEEK" => {
            let args = exactly(name, f, e, 1..=1, "one timestamp")?;
            let field = match name {
                "DAYOFWEEK" => "DOW",
                "DAYOFYEAR" => "DOY",
                other => other,
            };
            return time_field(field, args[0], scope).map(Some);
        }
        _ => return Ok(None),
    }))
}

fn time_arg(arg: &Expr, ty: &SqlType) -> Result<(), SqlError> {
    if ty.is_time() {
        return Ok(());
    }
    Err(SqlError::span(
        arg.span(),
        "expected a TIMESTAMP(3) or TIMESTAMP_LTZ(3)",
    ))
}

/// A calendar field of a timestamp that `date_format` does not give: `DOW` (1 = Sunday),
/// `ISODOW`, `DOY`, `QUARTER`, `WEEK` (ISO), `MILLISECOND`; a BIGINT, as in Flink.
pub(super) fn time_field(
    field: &str,
    ts: &Expr,
    scope: &mut dyn Scope,
) -> Result<(String, SqlType), SqlError> {
    let (t, ty) = translate(ts, scope)?;
    time_arg(ts, &ty)?;
    Ok((format!("time_field({t}, \"{field}\")"), SqlType::Integer))
}
