//! Flink's temporal functions on epoch milliseconds (sluice's TIMESTAMP(3), in UTC, the session
//! time zone): `TO_TIMESTAMP`, `UNIX_TIMESTAMP` and `TO_DATE` (parsing with Java's pattern
//! letters, see `parse`), `TIMESTAMPADD`, `TIMESTAMPDIFF` (calendar months as Calcite counts
//! them), the fields `EXTRACT` and `DAYOFWEEK` & co. read, and `FLOOR`/`CEIL(ts TO unit)`.

mod parse;

use super::super::error::EvalReason;
use super::super::functions::Func;
use super::super::ops::{Blame, OpError, OpResult};
use super::super::time::civil_from_days;
use super::super::value::Value;
use super::{int_at, str_at};
use std::borrow::Cow;

const MS_PER_DAY: i64 = 86_400_000;

fn unit_error(op: &'static str, arg: usize, unit: &str, expected: &str) -> OpError {
    OpError {
        blame: Blame::Arg(arg),
        reason: EvalReason::Invalid {
            op,
            why: format!("unknown unit `{unit}` (expected {expected})"),
        },
    }
}

fn overflow(op: &'static str) -> OpError {
    OpError {
        blame: Blame::Here,
        reason: EvalReason::IntOverflow { op },
    }
}

pub(super) fn call<'a>(func: Func, args: &mut [Value<'a>]) -> OpResult<'a> {
    let name = func.name();
    let fmt = (args.len() > 1).then(|| str_at(args, 1));
    match func {
        // A string that does not parse gives null, as Flink's TO_TIMESTAMP.
        Func::ParseTime => {
            Ok(parse::timestamp(str_at(args, 0), fmt).map_or(Value::Null, Value::Int))
        }
        // Flink's UNIX_TIMESTAMP(s [, fmt]) parses leniently (java.text.SimpleDateFormat) and
        // gives Long.MIN_VALUE for text it cannot read.
        Func::UnixTimestamp => {
            let fmt = fmt.unwrap_or("yyyy-MM-dd HH:mm:ss");
            Ok(Value::Int(
                parse::lenient(str_at(args, 0), fmt).map_or(i64::MIN, |ms| ms / 1000),
            ))
        }
        Func::ToDate => Ok(
            parse::date(str_at(args, 0), fmt).map_or(Value::Null, |days| {
                let (y, m, d) = civil_from_days(days);
                Value::Str(Cow::Owned(format!("{y:04}-{m:02}-{d:02}")))
            }),
        ),
        Func::TimeAdd => {
            let (unit, n, ts) = (str_at(args, 0), int_at(args, 1, 0), int_at(args, 2, 0));
            add(unit, n, ts)
                .map(Value::Int)
                .map_err(|e| e.unwrap_or_else(|| overflow(name)))
        }
        Func::TimeDiff => {
            let (unit, a, b) = (str_at(args, 0), int_at(args, 1, 0), int_at(args, 2, 0));
            diff(unit, a, b).map(Value::Int)
        }
        Func::TimeField => field(int_at(args, 0, 0), str_at(args, 1)).map(Value::Int),
        Func::FloorTime | Func::CeilTime => {
            let (ts, unit) = (int_at(args, 0, 0), str_at(args, 1));
            round(ts, unit, func == Func::CeilTime)
                .map(Value::Int)
                .map_err(|e| e.unwrap_or_else(|| overflow(name)))
        }
        _ => Ok(Value::Null),
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub(super) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub(super) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `ts` moved by `months` calendar months, the day kept or, where the month is shorter, its
/// last day (Java's `plusMonths`); `None` on overflow.
fn add_months(ts: i64, months: i64) -> Option<i64> {
    let (days, ms) = (ts.div_euclid(MS_PER_DAY), ts.rem_euclid(MS_PER_DAY));
    let (y, m, d) = civil_from_days(days);
    let total = y
        .checked_mul(12)?
        .checked_add(i64::from(m) - 1)?
        .checked_add(months)?;
    let (y, m) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
    if !(-1_000_000..=1_000_000).contains(&y) {
        return None;
    }
    let d = d.min(days_in_month(y, m));
    days_from_civil(y, m, d)
        .checked_mul(MS_PER_DAY)?
        .checked_add(ms)
}

/// Milliseconds of a fixed-length unit.
fn fixed_ms(unit: &str) -> Option<i64> {
    Some(match unit.to_ascii_uppercase().as_str() {
        "MILLISECOND" => 1,
        "SECOND" => 1_000,
        "MINUTE" => 60_000,
        "HOUR" => 3_600_000,
        "DAY" => MS_PER_DAY,
        "WEEK" => 7 * MS_PER_DAY,
        _ => return None,
    })
}

/// Months of a calendar unit.
fn unit_months(unit: &str) -> Option<i64> {
    Some(match unit.to_ascii_uppercase().as_str() {
        "MONTH" => 1,
        "QUARTER" => 3,
        "YEAR" => 12,
        _ => return None,
    })
}

const UNITS: &str = "SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR";

/// `TIMESTAMPADD(unit, n, ts)`. `Err(None)` is an overflow.
fn add(unit: &str, n: i64, ts: i64) -> Result<i64, Option<OpError>> {
    if let Some(ms) = fixed_ms(unit) {
        return n
            .checked_mul(ms)
            .and_then(|d| ts.checked_add(d))
            .ok_or(None);
    }
    let months = unit_months(unit).ok_or_else(|| Some(unit_error("time_add", 0, unit, UNITS)))?;
    n.checked_mul(months)
        .and_then(|m| add_months(ts, m))
        .ok_or(None)
}

/// `TIMESTAMPDIFF(unit, a, b)`: whole units from `a` to `b`, toward zero.
fn diff(unit: &str, a: i64, b: i64) -> Result<i64, OpError> {
    if let Some(ms) = fixed_ms(unit) {
        return Ok((i128::from(b) - i128::from(a))
            .checked_div(i128::from(ms))
            .unwrap_or(0) as i64);
    }
    let months = unit_months(unit).ok_or_else(|| unit_error("time_diff", 0, unit, UNITS))?;
    Ok(months_between(b, a) / months)
}

/// Calcite's `subtractMonths(t0, t1)`: the whole months from `t1` to `t0`, a month counting once
/// its day (the last of a shorter month) and time of day are reached. In closed form: the months
/// between the two calendar months, less one where `t1`'s day and time fall after `t0`'s.
fn months_between(t0: i64, t1: i64) -> i64 {
    if t0 < t1 {
        return -months_between(t1, t0);
    }
    let (d0, ms0) = (t0.div_euclid(MS_PER_DAY), t0.rem_euclid(MS_PER_DAY));
    let (d1, ms1) = (t1.div_euclid(MS_PER_DAY), t1.rem_euclid(MS_PER_DAY));
    let ((y0, m0, day0), (y1, m1, day1)) = (civil_from_days(d0), civil_from_days(d1));
    let months = (y0 * 12 + i64::from(m0)) - (y1 * 12 + i64::from(m1));
    let landed = day1.min(days_in_month(y0, m0));
    if (landed, ms1) > (day0, ms0) {
        months - 1
    } else {
        months
    }
}

/// A field of `ts`'s calendar date: `DOW` (1 = Sunday), `ISODOW` (1 = Monday), `DOY`,
/// `QUARTER`, `WEEK` (ISO-8601), `MILLISECOND` (of the minute, as Calcite's EXTRACT).
fn field(ts: i64, name: &str) -> Result<i64, OpError> {
    let days = ts.div_euclid(MS_PER_DAY);
    let (y, m, _) = civil_from_days(days);
    // 1970-01-01 was a Thursday.
    let iso_dow = (days + 3).rem_euclid(7) + 1;
    Ok(match name.to_ascii_uppercase().as_str() {
        "DOW" => iso_dow % 7 + 1,
        "ISODOW" => iso_dow,
        "DOY" => days - days_from_civil(y, 1, 1) + 1,
        "QUARTER" => i64::from(m - 1) / 3 + 1,
        "WEEK" => iso_week(days),
        "MILLISECOND" => ts.rem_euclid(60_000),
        other => {
            return Err(unit_error(
                "time_field",
                1,
                other,
                "DOW, ISODOW, DOY, QUARTER, WEEK or MILLISECOND",
            ))
        }
    })
}

/// The ISO-8601 week of the year of day `days`: weeks start on Monday, week 1 holds the year's
/// first Thursday.
fn iso_week(days: i64) -> i64 {
    let iso_dow = (days + 3).rem_euclid(7) + 1;
    let thursday = days - iso_dow + 4;
    let (y, _, _) = civil_from_days(thursday);
    (thursday - days_from_civil(y, 1, 1)) / 7 + 1
}

/// `FLOOR(ts TO unit)` (down) or `CEIL(ts TO unit)` (up, unless already on a boundary).
fn round(ts: i64, unit: &str, up: bool) -> Result<i64, Option<OpError>> {
    if let Some(ms) = fixed_ms(unit).filter(|_| !unit.eq_ignore_ascii_case("WEEK")) {
        let down = ts.div_euclid(ms).checked_mul(ms).ok_or(None)?;
        return if up && down != ts {
            down.checked_add(ms).ok_or(None)
        } else {
            Ok(down)
        };
    }
    let months = unit_months(unit).ok_or_else(|| {
        Some(unit_error(
            "floor_time",
            1,
            unit,
            "SECOND, MINUTE, HOUR, DAY, MONTH, QUARTER or YEAR",
        ))
    })?;
    let (y, m, _) = civil_from_days(ts.div_euclid(MS_PER_DAY));
    let first = (i64::from(m) - 1) / months * months;
    let down = days_from_civil(y, first as u32 + 1, 1)
        .checked_mul(MS_PER_DAY)
        .ok_or(None)?;
    if up && down != ts {
        add_months(down, months).ok_or(None)
    } else {
        Ok(down)
    }
}
