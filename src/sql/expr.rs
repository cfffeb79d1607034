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
    /// The columns `alias.*` stands for, where the scope has a relation of that name (a join's
    /// side).
    fn qualified(&self, _alias: &str) -> Option<Vec<String>> {
        None
    }
}

/// The aggregate functions (an argument may be an expression: a group aggregate computes it first).
pub const AGGREGATES: [&str; 8] = [
    "COUNT",
    "SUM",
    "MIN",
    "MAX",
    "AVG",
    "FIRST_VALUE",
    "LAST_VALUE",
    "APPROX_COUNT_DISTINCT",
];

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
        Expr::Identifier(id) => double_read(scope.column(std::slice::from_ref(id), e)?),
        Expr::CompoundIdentifier(parts) => double_read(scope.column(parts, e)?),
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
        Expr::IsUnknown(x) | Expr::IsNotUnknown(x) => {
            let test = format!("coalesce(({0}) == ({0}), false)", translate(x, scope)?.0);
            let text = if matches!(e, Expr::IsUnknown(_)) {
                format!("!{test}")
            } else {
                test
            };
            (text, SqlType::Boolean)
        }
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
        Expr::Function(f) => super::functions::function(f, e, scope)?,
        Expr::Extract { field, expr, .. } => {
            super::functions::time_part(&field.to_string(), expr, e, scope)?
        }
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
        } => {
            use sqlparser::ast::TrimWhereField;
            let func = match trim_where {
                Some(TrimWhereField::Leading) => "ltrim",
                Some(TrimWhereField::Trailing) => "rtrim",
                _ => "btrim",
            };
            let (s, _) = translate(expr, scope)?;
            let text = match trim_what {
                Some(what) => format!("{func}({s}, {})", translate(what, scope)?.0),
                None => format!("{func}({s})"),
            };
            (text, SqlType::String)
        }
        Expr::Position { expr, r#in } => (
            format!(
                "locate({}, {})",
                translate(expr, scope)?.0,
                translate(r#in, scope)?.0
            ),
            SqlType::Integer,
        ),
        Expr::Overlay {
            expr,
            overlay_what,
            overlay_from,
            overlay_for,
        } => {
            let mut args = vec![
                translate(expr, scope)?.0,
                translate(overlay_what, scope)?.0,
                translate(overlay_from, scope)?.0,
            ];
            if let Some(n) = overlay_for {
                args.push(translate(n, scope)?.0);
            }
            (format!("overlay({})", args.join(", ")), SqlType::String)
        }
        Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => {
            let (a, _) = translate(a, scope)?;
            let (b, _) = translate(b, scope)?;
            // Not distinct: equal, or both NULL (where `=` itself is NULL).
            let same = format!("coalesce(({a}) == ({b}), !coalesce(({a}) == ({a}), false) && !coalesce(({b}) == ({b}), false))");
            let text = if matches!(e, Expr::IsDistinctFrom(..)) {
                format!("!({same})")
            } else {
                same
            };
            (text, SqlType::Boolean)
        }
        Expr::IsTrue(x) | Expr::IsNotTrue(x) | Expr::IsFalse(x) | Expr::IsNotFalse(x) => {
            let (x, _) = translate(x, scope)?;
            let text = match e {
                Expr::IsTrue(_) => format!("coalesce({x}, false)"),
                Expr::IsNotTrue(_) => format!("!coalesce({x}, false)"),
                Expr::IsFalse(_) => format!("!coalesce({x}, true)"),
                _ => format!("coalesce({x}, true)"),
            };
            (text, SqlType::Boolean)
        }
        Expr::Floor { expr, field } | Expr::Ceil { expr, field } => {
            super::functions::floor_ceil(e, expr, field, scope)?
        }
        Expr::Cast {
            kind: sqlparser::ast::CastKind::Cast,
            expr,
            data_type,
            format: None,
        } => cast(e, expr, data_type, scope)?,
        // TRY_CAST: the CAST, or NULL where it fails.
        Expr::Cast {
            kind: sqlparser::ast::CastKind::TryCast,
            expr,
            data_type,
            format: None,
        } => {
            let (text, ty) = cast(e, expr, data_type, scope)?;
            (format!("try({text})"), ty)
        }
        _ => return Err(unsupported(e, "this expression is")),
    })
}

/// A DOUBLE column's value as a double: its JSON number is read exactly, and DOUBLE arithmetic
/// and printing (`100.0`) follow from the type, as in Flink.
fn double_read((text, ty): (String, SqlType)) -> (String, SqlType) {
    if ty == SqlType::Float && !text.starts_with("to_double(") {
        return (format!("to_double({text})"), ty);
    }
    (text, ty)
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

/// `ts + INTERVAL '10' SECOND`, `ts - INTERVAL ..`, `INTERVAL .. + ts`: a timestamp moved by a
/// day-time interval, in the epoch milliseconds a timestamp is held as; `None` when neither side
/// is an interval.
fn shifted_time(
    e: &Expr,
    left: &Expr,
    op: &BinaryOperator,
    right: &Expr,
    scope: &mut dyn Scope,
) -> Result<Option<(String, SqlType)>, SqlError> {
    let (time, interval, sign) = match (left, op, right) {
        (_, BinaryOperator::Plus, Expr::Interval(_)) => (left, right, "+"),
        (_, BinaryOperator::Minus, Expr::Interval(_)) => (left, right, "-"),
        (Expr::Interval(_), BinaryOperator::Plus, _) => (right, left, "+"),
        (Expr::Interval(_), _, _) | (_, _, Expr::Interval(_)) => {
            return Err(unsupported(e, "this operation on an interval is"))
        }
        _ => return Ok(None),
    };
    let ms = super::time::interval_ms(interval)?;
    let (t, ty) = translate(time, scope)?;
    if !ty.is_time() {
        return Err(SqlError::span(
            time.span(),
            "an interval is added to or taken from a TIMESTAMP or TIMESTAMP_LTZ only",
        ));
    }
    Ok(Some((format!("({t} {sign} {ms})"), ty)))
}

fn binary(
    e: &Expr,
    left: &Expr,
    op: &BinaryOperator,
    right: &Expr,
    scope: &mut dyn Scope,
) -> Result<(String, SqlType), SqlError> {
    if let Some(shifted) = shifted_time(e, left, op, right, scope)? {
        return Ok(shifted);
    }
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
    // Flink divides integers as integers, toward zero.
    if matches!(op, BinaryOperator::Divide) && lt == SqlType::Integer && rt == SqlType::Integer {
        return Ok((format!("div({l}, {r})"), SqlType::Integer));
    }
    let ty = match op {
        BinaryOperator::Plus
        | BinaryOperator::Minus
        | BinaryOperator::Multiply
        | BinaryOperator::Divide
        | BinaryOperator::Modulo
            if lt == SqlType::Float || rt == SqlType::Float =>
        {
            SqlType::Float
        }
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
        (SqlType::Float, t) if !t.is_time() => (format!("to_double({text})"), to),
        (SqlType::Decimal { precision, scale }, t) if !t.is_time() => {
            (within_precision(&format!("to_decimal({text}, {scale})"), *precision, *scale), to.clone())
        }
        (SqlType::Timestamp | SqlType::TimestampLtz, t) if t.is_time() => (text, to),
        _ => {
            return Err(unsupported(
                e,
                &format!("CAST to {dt} from this type is (supported: to STRING, the integer types, DOUBLE/FLOAT and DECIMAL(p, s), and between TIMESTAMP(3) and TIMESTAMP_LTZ(3))"),
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
