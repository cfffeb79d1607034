//! Test-only reference semantics of the built-in functions (see `reference`), including a
//! calendar that walks years and months one at a time.

use std::cmp::Ordering;

use rust_decimal::RoundingStrategy;

use super::reference::{int, is_number, ordering, R, V};

fn string(v: &V) -> Result<Option<String>, String> {
    match v {
        V::Null => Ok(None),
        V::Str(s) => Ok(Some(s.to_string())),
        _ => Err("not a string".into()),
    }
}

pub(super) fn call(name: &str, args: Vec<V>) -> R {
    let any_null = args.contains(&V::Null);
    match name {
        "concat" => {
            let text: String = args.iter().map(|a| a.to_string()).collect();
            Ok(if any_null { V::Null } else { V::from(text) })
        }
        "lower" | "upper" | "len" => Ok(match string(&args[0])? {
            None => V::Null,
            Some(s) if name == "lower" => V::from(s.to_lowercase()),
            Some(s) if name == "upper" => V::from(s.to_uppercase()),
            Some(s) => V::Int(s.chars().count() as i64),
        }),
        "starts_with" | "ends_with" | "contains" => {
            let (s, p) = (string(&args[0])?, string(&args[1])?);
            let (Some(s), Some(p)) = (s, p) else {
                return Ok(V::Null);
            };
            let found = match name {
                "starts_with" => s.starts_with(&p),
                "ends_with" => s.ends_with(&p),
                _ => s.contains(&p),
            };
            Ok(V::Bool(found))
        }
        "min" | "max" => {
            let mut best: Option<V> = None;
            for arg in args.iter() {
                if matches!(arg, V::Bool(_)) {
                    return Err("min/max of bool".into());
                }
                if *arg == V::Null {
                    continue;
                }
                let replace = match &best {
                    None => true,
                    Some(b) => {
                        let o = ordering(b, arg)?.unwrap_or(Ordering::Equal);
                        if name == "max" {
                            o == Ordering::Less
                        } else {
                            o == Ordering::Greater
                        }
                    }
                };
                if replace {
                    best = Some(arg.clone());
                }
            }
            Ok(if any_null {
                V::Null
            } else {
                best.unwrap_or(V::Null)
            })
        }
        "abs" | "floor" | "ceil" | "round" => math(name, args, any_null),
        "truncate_time" | "format_time" | "sql_timestamp" => time(name, args, any_null),
        _ => Err(format!("unknown function {name}")),
    }
}

fn math(name: &str, args: Vec<V>, any_null: bool) -> R {
    if !is_number(&args[0]) && args[0] != V::Null {
        return Err("math on non-number".into());
    }
    let digits = match args.get(1) {
        None | Some(V::Null) => 0,
        Some(V::Int(d)) => *d,
        Some(_) => return Err("digits not an int".into()),
    };
    if any_null {
        return Ok(V::Null);
    }
    if !(0..=28).contains(&digits) {
        return Err("digits out of range".into());
    }
    match (&args[0], name) {
        (V::Int(i), "abs") => int(i128::from(*i).abs()),
        (V::Int(i), _) => Ok(V::Int(*i)),
        (V::Decimal(d), "abs") => Ok(V::Decimal(if d.is_sign_negative() { -*d } else { *d })),
        (V::Decimal(d), "floor") => Ok(V::Decimal(
            d.round_dp_with_strategy(0, RoundingStrategy::ToNegativeInfinity),
        )),
        (V::Decimal(d), "ceil") => Ok(V::Decimal(
            d.round_dp_with_strategy(0, RoundingStrategy::ToPositiveInfinity),
        )),
        (V::Decimal(d), _) => Ok(V::Decimal(
            d.round_dp_with_strategy(digits as u32, RoundingStrategy::MidpointAwayFromZero),
        )),
        _ => Err("unreachable".into()),
    }
}

fn time(name: &str, args: Vec<V>, any_null: bool) -> R {
    if !matches!(args[0], V::Int(_) | V::Null) {
        return Err("time of non-int".into());
    }
    if name == "truncate_time" && !matches!(args[1], V::Str(_) | V::Null) {
        return Err("unit not a string".into());
    }
    if any_null {
        return Ok(V::Null);
    }
    let V::Int(ts) = args[0] else {
        return Err("unreachable".into());
    };
    if name == "truncate_time" {
        let unit: i128 = match args[1].to_string().as_str() {
            "second" => 1_000,
            "minute" => 60_000,
            "hour" => 3_600_000,
            "day" => 86_400_000,
            _ => return Err("bad unit".into()),
        };
        return int(i128::from(ts).div_euclid(unit) * unit);
    }
    let rfc = naive_format(ts)?;
    if name == "sql_timestamp" {
        // Flink's SQL timestamp: a space for the `T`, no zone, the fraction trimmed.
        let body = rfc.trim_end_matches('Z').replacen('T', " ", 1);
        let body = body.trim_end_matches('0').trim_end_matches('.');
        return Ok(V::from(body.to_string()));
    }
    Ok(V::from(rfc))
}

/// RFC 3339 by walking years and months one at a time from 1970.
pub(super) fn naive_format(ts: i64) -> Result<String, String> {
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let year_days = |y: i64| if leap(y) { 366 } else { 365 };
    let mut days = ts.div_euclid(86_400_000);
    let ms = ts.rem_euclid(86_400_000);
    if days.abs() > 4_000_000 {
        // More than 10,000 years from 1970: certainly outside 0000-9999.
        return Err("year out of range".into());
    }
    let mut year = 1970;
    while days < 0 {
        year -= 1;
        days += year_days(year);
    }
    while days >= year_days(year) {
        days -= year_days(year);
        year += 1;
    }
    if !(0..=9999).contains(&year) {
        return Err("year out of range".into());
    }
    let lengths = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 0;
    while days >= lengths[month] {
        days -= lengths[month];
        month += 1;
    }
    Ok(format!(
        "{year:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        month + 1,
        days + 1,
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    ))
}
