//! A source table's event time as its DDL declares it: the `WATERMARK FOR` column, computed by
//! `TO_TIMESTAMP_LTZ` from a number of epoch milliseconds or seconds, and the watermark's delay;
//! and interval literals (`INTERVAL '5' SECOND`) in milliseconds.

use sqlparser::ast::Spanned;
use sqlparser::ast::{DateTimeField, Expr, Value};

use super::ddl::{Column, Table};
use super::error::SqlError;
use super::expr::plain_args;
use super::options::EventTime;
use super::types::SqlType;

/// The event time of a source table: `WATERMARK FOR rt AS rt - INTERVAL 'n' UNIT` over a computed
/// column `rt AS TO_TIMESTAMP_LTZ(field, 3)` (milliseconds) or `(field, 0)` (seconds); `None`
/// for a table without a WATERMARK, whose rows have no time attribute (as in Flink: they feed
/// projections, filters and sinks, and an operator that needs event time refuses them).
pub fn event_time(t: &Table) -> Result<Option<EventTime>, SqlError> {
    let Some(wm) = &t.watermark else {
        return Ok(None);
    };
    let Some(col) = t.columns.iter().find(|c| c.name == wm.column) else {
        return Err(SqlError::span(
            wm.span,
            format!(
                "WATERMARK FOR `{}`: the table has no such column",
                wm.column
            ),
        ));
    };
    let (field, unit) = time_source(t, col)?;
    let out_of_orderness_ms = watermark_delay(&wm.expr, &wm.column)?;
    Ok(Some(EventTime {
        column: wm.column.clone(),
        field,
        unit,
        out_of_orderness_ms,
    }))
}

fn time_source(t: &Table, col: &Column) -> Result<(String, &'static str), SqlError> {
    let refuse = || {
        SqlError::span(col.span, format!("time attribute `{}`: sluice reads event time from a number of epoch milliseconds or seconds; declare it as `{} AS TO_TIMESTAMP_LTZ(field, 3)` (or `, 0)` for seconds) over a BIGINT column", col.name, col.name))
    };
    let Some(Expr::Function(f)) = &col.computed else {
        return Err(refuse());
    };
    let e = col.computed.as_ref().ok_or_else(refuse)?;
    if !f.name.to_string().eq_ignore_ascii_case("TO_TIMESTAMP_LTZ") {
        return Err(refuse());
    }
    let args = plain_args(f, e)?;
    let (Some(Expr::Identifier(field)), precision) = (args.first().copied(), args.get(1).copied())
    else {
        return Err(refuse());
    };
    let unit = match precision {
        Some(Expr::Value(v)) if matches!(&v.value, Value::Number(n, _) if n == "3") => "ms",
        Some(Expr::Value(v)) if matches!(&v.value, Value::Number(n, _) if n == "0") => "s",
        None => "s",
        Some(other) => {
            return Err(SqlError::span(
                other.span(),
                "TO_TIMESTAMP_LTZ's precision must be 3 (milliseconds) or 0 (seconds)",
            ))
        }
    };
    match t.columns.iter().find(|c| c.name == field.value) {
        Some(c) if matches!(c.ty, SqlType::Integer) => Ok((field.value.clone(), unit)),
        Some(c) => Err(SqlError::span(
            c.span,
            format!("`{}` holds the event time, so it must be a BIGINT", c.name),
        )),
        None => Err(SqlError::span(
            field.span,
            format!("table `{}` has no column `{}`", t.name, field.value),
        )),
    }
}

/// `rt` -> 0, `rt - INTERVAL '5' SECOND` -> 5000.
fn watermark_delay(e: &Expr, column: &str) -> Result<i64, SqlError> {
    let refuse = || {
        SqlError::span(
            e.span(),
            format!("the watermark must be `{column}` or `{column} - INTERVAL '...' UNIT`"),
        )
    };
    match e {
        Expr::Identifier(id) if id.value == column => Ok(0),
        Expr::BinaryOp {
            left,
            op: sqlparser::ast::BinaryOperator::Minus,
            right,
        } => match left.as_ref() {
            Expr::Identifier(id) if id.value == column => interval_ms(right),
            _ => Err(refuse()),
        },
        _ => Err(refuse()),
    }
}

/// The longest interval taken: small enough that a bound built of several never overflows.
pub const MAX_INTERVAL_MS: i64 = 100_000 * 366 * 86_400_000;

/// `INTERVAL '5' SECOND` in milliseconds (whole milliseconds, not negative).
pub fn interval_ms(e: &Expr) -> Result<i64, SqlError> {
    let refuse = |why: &str| {
        SqlError::span(
            e.span(),
            format!("expected an interval such as INTERVAL '5' SECOND: {why}"),
        )
    };
    let Expr::Interval(i) = e else {
        return Err(refuse("not an interval"));
    };
    let text = match i.value.as_ref() {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::Number(s, _) => s.trim().to_string(),
            _ => return Err(refuse("the amount must be a number in quotes")),
        },
        _ => return Err(refuse("the amount must be a number in quotes")),
    };
    if i.last_field.is_some() {
        return Err(refuse("ranges such as DAY TO SECOND are not supported yet"));
    }
    let unit_ms: i64 = match i.leading_field {
        Some(DateTimeField::Millisecond | DateTimeField::Milliseconds) => 1,
        Some(DateTimeField::Second | DateTimeField::Seconds) => 1_000,
        Some(DateTimeField::Minute | DateTimeField::Minutes) => 60_000,
        Some(DateTimeField::Hour | DateTimeField::Hours) => 3_600_000,
        Some(DateTimeField::Day | DateTimeField::Days) => 86_400_000,
        _ => {
            return Err(refuse(
                "the unit must be MILLISECOND, SECOND, MINUTE, HOUR or DAY",
            ))
        }
    };
    let amount: rust_decimal::Decimal = text
        .parse()
        .map_err(|_| refuse("the amount is not a number"))?;
    let ms = amount
        .checked_mul(rust_decimal::Decimal::from(unit_ms))
        .ok_or_else(|| refuse("it is too long"))?;
    if ms.is_sign_negative() || ms.fract() != rust_decimal::Decimal::ZERO {
        return Err(refuse(
            "it must be a whole, non-negative number of milliseconds",
        ));
    }
    // Sums of a few intervals (bounds, offsets) must still fit an i64.
    i64::try_from(ms)
        .ok()
        .filter(|ms| *ms <= MAX_INTERVAL_MS)
        .ok_or_else(|| refuse("it is too long (at most 100 000 years)"))
}
