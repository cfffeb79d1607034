//! SQL expressions to sluice's expression language (`src/expr`): Flink's operators and function
//! names to ours, SQL's three-valued logic kept (`=` with a NULL is NULL in both). A column
//! reference is resolved by the query's [`Scope`]; in a grouped query an aggregate call becomes the
//! name of the window's output field that holds it.

use sqlparser::ast::{
    BinaryOperator, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, Ident,
    InTarget, Spanned, UnaryOperator, Value,
};

use super::error::SqlError;
use super::types::SqlType;

/// What names mean where an expression is written.
pub trait Scope {
    /// `parts`: `col`, `alias.col` or `col.nested.field`. Returns the expression text for it.
    fn column(&mut self, parts: &[Ident], e: &Expr) -> Result<(String, SqlType), SqlError>;
    /// An aggregate call: `Ok(None)` where aggregates are not allowed.
    fn aggregate(&mut self, f: &Function, e: &Expr) -> Result<Option<(String, SqlType)>, SqlError>;
}

pub const AGGREGATES: [&str; 5] = ["COUNT", "SUM", "MIN", "MAX", "AVG"];

/// A string literal of the expression language.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether `name` can be written bare as a field name in the expression language.
pub fn is_plain_name(name: &str) -> bool {
    let mut chars = name.chars();
    let head_ok = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_');
    head_ok
        && chars.all(|c| c.is_alphanumeric() || c == '_')
        && !matches!(name, "true" | "false" | "null" | "in")
}

pub fn translate(e: &Expr, scope: &mut dyn Scope) -> Result<(String, SqlType), SqlError> {
    let other = || SqlType::Other(String::new());
    Ok(match e {
        Expr::Identifier(id) => scope.column(std::slice::from_ref(id), e)?,
        Expr::CompoundIdentifier(parts) => scope.column(parts, e)?,
        Expr::Value(v) => literal(&v.value, e)?,
        Expr::Nested(inner) => {
            let (text, ty) = translate(inner, scope)?;
            (format!("({text})"), ty)
        }
        Expr::UnaryOp { op, expr } => {
            let (text, ty) = translate(expr, scope)?;
            match op {
                UnaryOperator::Not => (format!("!({text})"), SqlType::Boolean),
                UnaryOperator::Minus => (format!("-({text})"), ty),
                UnaryOperator::Plus => (text, ty),
                _ => return Err(unsupported(e, "this operator is")),
            }
        }
        Expr::BinaryOp { left, op, right } => binary(e, left, op, right, scope)?,
        // `x == x` is null exactly when `x` is null (three-valued comparison), and true otherwise.
        Expr::IsNotNull(x) => (
            format!("coalesce(({0}) == ({0}), false)", translate(x, scope)?.0),
            SqlType::Boolean,
        ),
        Expr::IsNull(x) => (
            format!("!coalesce(({0}) == ({0}), false)", translate(x, scope)?.0),
            SqlType::Boolean,
        ),
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => {
            let (x, _) = translate(expr, scope)?;
            let (lo, _) = translate(low, scope)?;
            let (hi, _) = translate(high, scope)?;
            let test = format!("(({x}) >= ({lo}) && ({x}) <= ({hi}))");
            (
                if *negated { format!("!{test}") } else { test },
                SqlType::Boolean,
            )
        }
        Expr::In {
            expr,
            target: InTarget::List(list),
            negated,
            ..
        } => {
            let (x, _) = translate(expr, scope)?;
            let items = list
                .iter()
                .map(|i| translate(i, scope).map(|(t, _)| t))
                .collect::<Result<Vec<_>, _>>()?;
            let test = format!("(({x}) in [{}])", items.join(", "));
            (
                if *negated { format!("!{test}") } else { test },
                SqlType::Boolean,
            )
        }
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            let mut text = match else_result {
                Some(r) => translate(r, scope)?.0,
                None => "null".to_string(),
            };
            for when in conditions.iter().rev() {
                let (c, _) = translate(&when.condition, scope)?;
                let (r, _) = translate(&when.result, scope)?;
                // SQL: a NULL condition is not true.
                let test = match operand {
                    Some(op) => format!("coalesce(({}) == ({c}), false)", translate(op, scope)?.0),
                    None => format!("coalesce({c}, false)"),
                };
                text = format!("({test} ? ({r}) : ({text}))");
            }
            (text, other())
        }
        Expr::Function(f) => function(f, e, scope)?,
        Expr::Extract { field, expr, .. } => time_part(&field.to_string(), expr, e, scope)?,
        Expr::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            let (s, _) = translate(expr, scope)?;
            let from = match substring_from {
                Some(f) => translate(f, scope)?.0,
                None => "1".into(),
            };
            let text = match substring_for {
                Some(n) => format!("substr({s}, {from}, {})", translate(n, scope)?.0),
                None => format!("substr({s}, {from})"),
            };
            (text, SqlType::String)
        }
        Expr::Trim {
            expr,
            trim_where,
            trim_what,
            trim_characters: None,
        } if matches!(
            trim_where,
            None | Some(sqlparser::ast::TrimWhereField::Both)
        ) && trim_what.as_deref().is_none_or(
            |w| matches!(w, Expr::Value(v) if v.value == Value::SingleQuotedString(" ".into())),
        ) =>
        {
            (
                format!("trim({})", translate(expr, scope)?.0),
                SqlType::String,
            )
        }
        Expr::Cast {
            kind: sqlparser::ast::CastKind::Cast,
            expr,
            data_type,
            format: None,
        } => cast(e, expr, data_type, scope)?,
        _ => return Err(unsupported(e, "this expression is")),
    })
}

fn literal(v: &Value, e: &Expr) -> Result<(String, SqlType), SqlError> {
    Ok(match v {
        Value::Number(n, _) if n.contains(['e', 'E']) => {
            return Err(unsupported(e, "a number with an exponent is"))
        }
        Value::Number(n, _) if n.contains('.') => {
            let scale = n.split('.').nth(1).map_or(0, |f| f.len() as u32);
            (
                n.clone(),
                SqlType::Decimal {
                    precision: n.len() as u32,
                    scale,
                },
            )
        }
        Value::Number(n, _) => (n.clone(), SqlType::Integer),
        Value::SingleQuotedString(s) => (quote(s), SqlType::String),
        Value::Boolean(b) => (b.to_string(), SqlType::Boolean),
        Value::Null => ("null".into(), SqlType::Other(String::new())),
        _ => return Err(unsupported(e, "this literal is")),
    })
}

fn binary(
    e: &Expr,
    left: &Expr,
    op: &BinaryOperator,
    right: &Expr,
    scope: &mut dyn Scope,
) -> Result<(String, SqlType), SqlError> {
    let (l, lt) = translate(left, scope)?;
    let (r, rt) = translate(right, scope)?;
    let symbol = match op {
        BinaryOperator::Plus => "+",
        BinaryOperator::Minus => "-",
        BinaryOperator::Multiply => "*",
        BinaryOperator::Divide => "/",
        BinaryOperator::Modulo => "%",
        BinaryOperator::Eq => "==",
        BinaryOperator::NotEq => "!=",
        BinaryOperator::Lt => "<",
        BinaryOperator::LtEq => "<=",
        BinaryOperator::Gt => ">",
        BinaryOperator::GtEq => ">=",
        BinaryOperator::And => "&&",
        BinaryOperator::Or => "||",
        BinaryOperator::StringConcat => {
            return Ok((format!("concat({l}, {r})"), SqlType::String));
        }
        _ => return Err(unsupported(e, &format!("the operator `{op}` is"))),
    };
    let ty = match op {
        BinaryOperator::Plus
        | BinaryOperator::Minus
        | BinaryOperator::Multiply
        | BinaryOperator::Modulo
            if lt == SqlType::Integer && rt == SqlType::Integer =>
        {
            SqlType::Integer
        }
        BinaryOperator::Plus
        | BinaryOperator::Minus
        | BinaryOperator::Multiply
        | BinaryOperator::Divide
        | BinaryOperator::Modulo => SqlType::Other(String::new()),
        _ => SqlType::Boolean,
    };
    Ok((format!("({l} {symbol} {r})"), ty))
}

/// `CAST(x AS type)` with Flink's rules: to an integer type truncates toward zero, to
/// DECIMAL(p, s) rounds half away from zero to `s` digits, to a string writes a DECIMAL(p, s)
/// with its `s` digits and a boolean as TRUE/FALSE; between TIMESTAMP and TIMESTAMP_LTZ only
/// the type changes (sluice's time zone is UTC).
fn cast(
    e: &Expr,
    x: &Expr,
    dt: &sqlparser::ast::DataType,
    scope: &mut dyn Scope,
) -> Result<(String, SqlType), SqlError> {
    let (text, from) = translate(x, scope)?;
    use sqlparser::ast::{CharacterLength, DataType};
    match dt {
        DataType::Char(Some(_)) | DataType::Character(Some(_)) => {
            return Err(unsupported(e, "CAST to CHAR(n) (padded with spaces) is"))
        }
        DataType::Varchar(Some(CharacterLength::IntegerLength { length, .. }))
        | DataType::CharacterVarying(Some(CharacterLength::IntegerLength { length, .. })) => {
            // Flink cuts a string to the length of the VARCHAR(n) it is cast to.
            let (inner, _) = cast(e, x, &DataType::String(None), scope)?;
            return Ok((format!("substr({inner}, 1, {length})"), SqlType::String));
        }
        _ => {}
    }
    let to = SqlType::of_data_type(dt, e.span())?;
    if let SqlType::Decimal { precision, scale } = to {
        if scale > 28 || scale > precision || precision > 38 {
            return Err(SqlError::span(e.span(), format!("DECIMAL({precision}, {scale}): sluice's decimals take a scale of at most 28 digits, and at most the precision (38 at most)")));
        }
    }
    Ok(match (&to, &from) {
        (SqlType::String, _) if from.is_time() => {
            return Err(unsupported(e, "CAST of a timestamp to a string is"))
        }
        (SqlType::String, SqlType::Decimal { scale, .. }) => {
            (format!("to_string(to_decimal({text}, {scale}))"), to)
        }
        (SqlType::String, _) => (format!("to_string({text})"), to),
        (SqlType::Integer, t) if t.is_time() => {
            return Err(unsupported(e, "CAST of a timestamp to a number is"))
        }
        (SqlType::Integer, _) => (format!("to_int({text})"), to),
        (SqlType::Decimal { precision, scale }, t) if !t.is_time() => {
            (within_precision(&format!("to_decimal({text}, {scale})"), *precision, *scale), to.clone())
        }
        (SqlType::Timestamp | SqlType::TimestampLtz, t) if t.is_time() => (text, to),
        _ => {
            return Err(unsupported(
                e,
                &format!("CAST to {dt} from this type is (supported: to STRING, the integer types and DECIMAL(p, s), and between TIMESTAMP(3) and TIMESTAMP_LTZ(3); DOUBLE is not offered: sluice computes exactly)"),
            ))
        }
    })
}

/// `d` where it fits DECIMAL(p, s) (at most `p - s` integer digits), else NULL, as Flink's
/// CAST gives. From 28 integer digits on it is not checked: the bound would not fit sluice's
/// 28-digit decimals, whose largest value (7.9e28) barely passes it.
fn within_precision(d: &str, precision: u32, scale: u32) -> String {
    let digits = precision - scale;
    if digits > 27 {
        return d.to_string();
    }
    let bound = format!("1{}", "0".repeat(digits as usize));
    let bound = if digits > 18 {
        format!("{bound}.0")
    } else {
        bound
    };
    format!("(coalesce(abs({d}) < {bound}, true) ? ({d}) : null)")
}

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
];

fn function(f: &Function, e: &Expr, scope: &mut dyn Scope) -> Result<(String, SqlType), SqlError> {
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
    let Some((_, ours)) = SCALARS.iter().find(|(flink, _)| *flink == name) else {
        return Err(SqlError::span(
            e.span(),
            format!(
                "function {name} is not supported yet (supported: {})",
                SCALARS
                    .iter()
                    .map(|(n, _)| *n)
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
            if !ty.is_time() {
                return Err(SqlError::span(ts.span(), "DATE_FORMAT of a string is not supported yet: pass a TIMESTAMP(3) or TIMESTAMP_LTZ(3)"));
            }
            let (p, _) = translate(pattern, scope)?;
            (format!("date_format({t}, {p})"), SqlType::String)
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
fn time_part(
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
        other => {
            return Err(unsupported(
                e,
                &format!(
                    "the time unit {other} is (supported: YEAR, MONTH, DAY, HOUR, MINUTE, SECOND)"
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

/// A call's arguments, each a plain expression (no `*`, named arguments or clauses).
pub fn plain_args<'f>(f: &'f Function, e: &Expr) -> Result<Vec<&'f Expr>, SqlError> {
    let list = match &f.args {
        FunctionArguments::List(list) if list.clauses.is_empty() => list,
        FunctionArguments::None => return Ok(Vec::new()),
        _ => return Err(unsupported(e, "these arguments is")),
    };
    list.args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => Ok(x),
            _ => Err(unsupported(e, "this argument is")),
        })
        .collect()
}

/// A refusal at `e`: `what` names the construct with its verb ("joins are", "this literal is").
pub fn unsupported(e: &impl Spanned, what: &str) -> SqlError {
    SqlError::span(e.span(), format!("{what} not supported yet"))
}
