//! Flink's function calls in SQL expressions: the scalar functions sluice has under their Flink
//! names, those that need their own translation (DATE_FORMAT, TO_TIMESTAMP_LTZ, MOD, the parts of
//! a timestamp), and aggregates, which the query's scope resolves.

use sqlparser::ast::{Expr, Function, Spanned};

use super::error::SqlError;
use super::expr::{plain_args, translate, unsupported, Scope, AGGREGATES};
use super::types::SqlType;

/// Flink's scalar functions that sluice has, by their Flink name.
const SCALARS: &[(&str, &str)] = &[
    ("LOWER", "lower"),
    ("UPPER", "upper"),
    ("CHAR_LENGTH", "len"),
    ("CHARACTER_LENGTH", "len"),
    ("COALESCE", "coalesce"),
    ("IFNULL", "coalesce"),
    ("ABS", "abs"),
    ("ROUND", "round"),
    ("FLOOR", "floor"),
    ("CEIL", "ceil"),
    ("CEILING", "ceil"),
    ("CONCAT", "concat"),
    ("LEAST", "min"),
    ("GREATEST", "max"),
    ("REPLACE", "replace"),
    ("SPLIT_INDEX", "split_index"),
    ("SUBSTR", "substr"),
    ("REGEXP", "regexp"),
    ("REGEXP_EXTRACT", "regexp_extract"),
    ("REGEXP_REPLACE", "regexp_replace"),
    ("REGEXP_COUNT", "regexp_count"),
    ("REGEXP_INSTR", "regexp_instr"),
    ("REGEXP_SUBSTR", "regexp_substr"),
];

pub(super) fn function(
    f: &Function,
    e: &Expr,
    scope: &mut dyn Scope,
) -> Result<(String, SqlType), SqlError> {
    let name = f.name.to_string().to_ascii_uppercase();
    if AGGREGATES.contains(&name.as_str()) {
        return match scope.aggregate(f, e)? {
            Some(found) => Ok(found),
            None => Err(SqlError::span(
                e.span(),
                format!("{name} needs a GROUP BY over a window table function (TUMBLE, HOP, CUMULATE): an aggregate over a whole stream is an updating result, which sluice does not produce"),
            )),
        };
    }
    if let Some(found) = time_function(&name, f, e, scope)? {
        return Ok(found);
    }
    if let Some(found) = super::builtins::function(&name, f, e, scope)? {
        return Ok(found);
    }
    let Some((_, ours)) = SCALARS.iter().find(|(flink, _)| *flink == name) else {
        return Err(SqlError::span(
            e.span(),
            format!(
                "function {name} is not supported yet (supported: {})",
                SCALARS
                    .iter()
                    .map(|(n, _)| *n)
                    .chain(super::builtins::names())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    let args = plain_args(f, e)?;
    let mut texts = Vec::with_capacity(args.len());
    let mut first_ty = SqlType::Other(String::new());
    for (i, a) in args.iter().enumerate() {
        let (t, ty) = translate(a, scope)?;
        if i == 0 {
            first_ty = ty;
        }
        texts.push(t);
    }
    let ty = match *ours {
        "lower" | "upper" | "concat" | "replace" | "split_index" | "substr" | "regexp_extract"
        | "regexp_replace" => SqlType::String,
        "regexp" => SqlType::Boolean,
        "regexp_count" | "regexp_instr" => SqlType::Integer,
        "regexp_substr" => SqlType::String,
        "len" => SqlType::Integer,
        _ => first_ty,
    };
    Ok((format!("{ours}({})", texts.join(", ")), ty))
}

/// `DATE_FORMAT(ts, 'pattern')` (a timestamp written by a Java pattern, in UTC) and
/// `TO_TIMESTAMP_LTZ(n, 3 | 0)` (epoch milliseconds or seconds as a TIMESTAMP_LTZ).
fn time_function(
    name: &str,
    f: &Function,
    e: &Expr,
    scope: &mut dyn Scope,
) -> Result<Option<(String, SqlType)>, SqlError> {
    Ok(Some(match name {
        "DATE_FORMAT" => {
            let [ts, pattern] = plain_args(f, e)?[..] else {
                return Err(SqlError::span(
                    e.span(),
                    "DATE_FORMAT takes a timestamp and a pattern",
                ));
            };
            let (t, ty) = translate(ts, scope)?;
            let (p, _) = translate(pattern, scope)?;
            match ty {
                ty if ty.is_time() => (format!("date_format({t}, {p})"), SqlType::String),
                // Flink reads the string as `yyyy-MM-dd HH:mm:ss` (leniently, as UNIX_TIMESTAMP
                // does) and gives NULL where it cannot: `unix_timestamp` is then Long.MIN_VALUE,
                // whose milliseconds overflow into the `try`'s NULL.
                SqlType::String => (
                    format!("date_format(try(unix_timestamp({t}) * 1000), {p})"),
                    SqlType::String,
                ),
                _ => {
                    return Err(SqlError::span(
                        ts.span(),
                        "DATE_FORMAT takes a TIMESTAMP, a TIMESTAMP_LTZ or a string",
                    ))
                }
            }
        }
        "MOD" => {
            let [a, b] = plain_args(f, e)?[..] else {
                return Err(SqlError::span(e.span(), "MOD takes two numbers"));
            };
            let (a, at) = translate(a, scope)?;
            let (b, bt) = translate(b, scope)?;
            let ty = if at == SqlType::Integer && bt == SqlType::Integer {
                SqlType::Integer
            } else {
                SqlType::Other(String::new())
            };
            (format!("({a} % {b})"), ty)
        }
        "YEAR" | "MONTH" | "DAYOFMONTH" | "HOUR" | "MINUTE" | "SECOND" => {
            let [ts] = plain_args(f, e)?[..] else {
                return Err(SqlError::span(
                    e.span(),
                    format!("{name} takes one timestamp"),
                ));
            };
            time_part(name, ts, e, scope)?
        }
        "TO_TIMESTAMP_LTZ" => {
            let args = plain_args(f, e)?;
            let (Some(n), precision) = (args.first(), args.get(1)) else {
                return Err(SqlError::span(
                    e.span(),
                    "TO_TIMESTAMP_LTZ takes a number and its precision (3 or 0)",
                ));
            };
            let (t, _) = translate(n, scope)?;
            let p = precision.map(|p| p.to_string());
            match p.as_deref() {
                Some("3") => (t, SqlType::TimestampLtz),
                Some("0") | None => (format!("({t} * 1000)"), SqlType::TimestampLtz),
                Some(_) => {
                    return Err(SqlError::span(
                        e.span(),
                        "TO_TIMESTAMP_LTZ's precision must be 3 (milliseconds) or 0 (seconds)",
                    ))
                }
            }
        }
        _ => return Ok(None),
    }))
}

/// `EXTRACT(unit FROM ts)`, `HOUR(ts)`, ...: the field of the timestamp's UTC calendar time, a
/// BIGINT as in Flink.
pub(super) fn time_part(
    unit: &str,
    ts: &Expr,
    e: &Expr,
    scope: &mut dyn Scope,
) -> Result<(String, SqlType), SqlError> {
    let pattern = match unit.to_ascii_uppercase().as_str() {
        "YEAR" => "yyyy",
        "MONTH" => "MM",
        "DAY" | "DAYOFMONTH" => "dd",
        "HOUR" => "HH",
        "MINUTE" => "mm",
        "SECOND" => "ss",
        field @ ("DOW" | "ISODOW" | "DOY" | "QUARTER" | "WEEK" | "MILLISECOND") => {
            return super::builtins::time_field(field, ts, scope)
        }
        other => {
            return Err(unsupported(
                e,
                &format!(
                    "the time unit {other} is (supported: YEAR, QUARTER, MONTH, WEEK, DAY, DOW, ISODOW, DOY, HOUR, MINUTE, SECOND, MILLISECOND)"
                ),
            ))
        }
    };
    let (t, ty) = translate(ts, scope)?;
    if !ty.is_time() {
        return Err(SqlError::span(ts.span(), format!("{unit} of something other than a TIMESTAMP(3) or TIMESTAMP_LTZ(3) is not supported yet")));
    }
    Ok((
        format!("to_int(date_format({t}, \"{pattern}\"))"),
        SqlType::Integer,
    ))
}

/// `FLOOR(x)`, `CEIL(x)` of a number, and `FLOOR(ts TO unit)`, `CEIL(ts TO unit)` of a timestamp
/// (SECOND up to YEAR; a timestamp keeps its type).
pub(super) fn floor_ceil(
    e: &Expr,
    x: &Expr,
    field: &sqlparser::ast::CeilFloorKind,
    scope: &mut dyn Scope,
) -> Result<(String, SqlType), SqlError> {
    use sqlparser::ast::{CeilFloorKind, DateTimeField};
    let up = matches!(e, Expr::Ceil { .. });
    let (t, ty) = translate(x, scope)?;
    let unit = match field {
        CeilFloorKind::DateTimeField(DateTimeField::NoDateTime) => {
            let f = if up { "ceil" } else { "floor" };
            return Ok((format!("{f}({t})"), ty));
        }
        CeilFloorKind::DateTimeField(unit) => unit.to_string().to_ascii_uppercase(),
        CeilFloorKind::Scale(_) => {
            return Err(unsupported(e, "FLOOR and CEIL with a scale are"));
        }
    };
    if !ty.is_time() {
        return Err(SqlError::span(
            x.span(),
            format!("FLOOR/CEIL .. TO {unit} needs a TIMESTAMP(3) or TIMESTAMP_LTZ(3)"),
        ));
    }
    if !matches!(
        unit.as_str(),
        "SECOND" | "MINUTE" | "HOUR" | "DAY" | "MONTH" | "QUARTER" | "YEAR"
    ) {
        return Err(unsupported(e, &format!("FLOOR/CEIL to {unit} is (supported: SECOND, MINUTE, HOUR, DAY, MONTH, QUARTER, YEAR)")));
    }
    let f = if up { "ceil_time" } else { "floor_time" };
    Ok((format!("{f}({t}, \"{unit}\")"), ty))
}
