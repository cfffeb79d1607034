//! Flink's string tests and conversions: `TRANSLATE`, `IS_ALPHA`, `IS_DIGIT`, `IS_DECIMAL`,
//! `INET_ATON`/`INET_NTOA` and `JSON_QUOTE`/`JSON_UNQUOTE`.

use std::borrow::Cow;

use super::super::functions::Func;
use super::super::ops::OpResult;
use super::super::value::Value;
use super::{int_at, str_at};
use std::fmt::Write as _;

pub(super) fn call<'a>(func: Func, args: &mut [Value<'a>]) -> OpResult<'a> {
    let s = str_at(args, 0);
    Ok(match func {
        Func::Translate if args[0].is_null() => Value::Null,
        Func::Translate => Value::Str(Cow::Owned(translate(s, str_at(args, 1), str_at(args, 2)))),
        // commons-lang's isAlpha/isNumeric: non-empty, every character a letter (a digit).
        Func::IsAlpha => Value::Bool(
            matches!(&args[0], Value::Str(t) if !t.is_empty() && t.chars().all(char::is_alphabetic)),
        ),
        Func::IsDigit => Value::Bool(
            matches!(&args[0], Value::Str(t) if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit())),
        ),
        Func::IsDecimal => Value::Bool(match &args[0] {
            Value::Int(_) | Value::Decimal(_) | Value::Float(_) => true,
            Value::Str(t) => is_number(t),
            _ => false,
        }),
        Func::InetAton => inet_aton(s).map_or(Value::Null, Value::Int),
        Func::InetNtoa => {
            let n = int_at(args, 0, -1);
            if !(0..=0xFFFF_FFFF).contains(&n) {
                Value::Null
            } else {
                let b = (n as u32).to_be_bytes();
                Value::Str(Cow::Owned(format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])))
            }
        }
        Func::JsonQuote => Value::Str(Cow::Owned(json_quote(s))),
        // A JSON string literal unquoted; anything else unchanged.
        Func::JsonUnquote if !(s.len() >= 2 && s.starts_with('"') && s.ends_with('"')) => {
            std::mem::replace(&mut args[0], Value::Null)
        }
        Func::JsonUnquote => match serde_json::from_str::<String>(s) {
            Ok(t) => Value::Str(Cow::Owned(t)),
            Err(_) => std::mem::replace(&mut args[0], Value::Null),
        },
        _ => Value::Null,
    })
}

/// Flink's JSON_QUOTE: a JSON string literal with `/` escaped too and every character past
/// ASCII as `\\uXXXX` (UTF-16 units, lower-case hex); control characters without a short
/// escape are left raw, as Flink leaves them.
fn json_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Other control characters stay as they are, as Flink writes them.
            '\0'..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
    out
}

/// Each character of `s` found in `from` becomes the one at its place in `to`, or goes where `to`
/// is shorter.
fn translate(s: &str, from: &str, to: &str) -> String {
    let to: Vec<char> = to.chars().collect();
    s.chars()
        .filter_map(|c| match from.chars().position(|f| f == c) {
            Some(i) => to.get(i).copied(),
            None => Some(c),
        })
        .collect()
}

/// Whether `t` is a number as `java.math.BigDecimal` reads one: a sign, digits with at most one
/// point (a digit on some side), an exponent.
fn is_number(t: &str) -> bool {
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    !(int.is_empty() && frac.is_empty()) && digits(int) && digits(frac) && exp_ok
}

/// `a.b.c.d` as the number `a * 2^24 + b * 2^16 + c * 2^8 + d`.
fn inet_aton(s: &str) -> Option<i64> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    parts.iter().try_fold(0_i64, |acc, p| {
        let v: u8 = if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        } else {
            p.parse().ok()?
        };
        Some(acc * 256 + i64::from(v))
    })
}
