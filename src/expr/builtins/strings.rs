//! Flink's string functions, in characters (Unicode scalar values) as Flink's are in UTF-16 units:
//! the two differ only for characters outside the Basic Multilingual Plane.

use std::borrow::Cow;

use super::super::error::EvalReason;
use super::super::functions::{concat_piece, Func};
use super::super::ops::{Blame, OpError, OpResult};
use super::super::value::Value;
use super::{int_at, str_at, MAX_BUILT};

fn owned<'a>(s: String) -> OpResult<'a> {
    Ok(Value::Str(Cow::Owned(s)))
}

fn too_long(op: &'static str) -> OpError {
    OpError {
        blame: Blame::Here,
        reason: EvalReason::Invalid {
            op,
            why: format!("the result would be longer than {MAX_BUILT} bytes"),
        },
    }
}

pub(super) fn call<'a>(func: Func, args: &mut [Value<'a>]) -> OpResult<'a> {
    let s = str_at(args, 0);
    match func {
        Func::ConcatWs => concat_ws(args),
        Func::Elt => {
            let i = match args.first() {
                Some(Value::Int(i)) => *i,
                _ => return Ok(Value::Null),
            };
            match usize::try_from(i) {
                Ok(i) if i >= 1 && i < args.len() => {
                    Ok(std::mem::replace(&mut args[i], Value::Null))
                }
                _ => Ok(Value::Null),
            }
        }
        Func::Lpad | Func::Rpad => pad(func, s, int_at(args, 1, 0), str_at(args, 2)),
        Func::Repeat => {
            let n = int_at(args, 1, 0).max(0) as u64;
            if (s.len() as u64).saturating_mul(n) > MAX_BUILT as u64 {
                return Err(too_long(func.name()));
            }
            owned(s.repeat(n as usize))
        }
        Func::Left | Func::Right => {
            let n = int_at(args, 1, 0);
            if n <= 0 {
                return owned(String::new());
            }
            let count = s.chars().count();
            let n = (n as u64).min(count as u64) as usize;
            owned(if func == Func::Left {
                s.chars().take(n).collect()
            } else {
                s.chars().skip(count - n).collect()
            })
        }
        Func::Reverse => owned(s.chars().rev().collect()),
        Func::Initcap => owned(initcap(s)),
        Func::Ltrim | Func::Rtrim | Func::Btrim => {
            let set = if args.len() > 1 { str_at(args, 1) } else { " " };
            let drop = |c: char| set.contains(c);
            owned(
                match func {
                    Func::Ltrim => s.trim_start_matches(drop),
                    Func::Rtrim => s.trim_end_matches(drop),
                    _ => s.trim_matches(drop),
                }
                .to_string(),
            )
        }
        Func::Locate => Ok(Value::Int(locate(s, str_at(args, 1), int_at(args, 2, 1)))),
        // Flink's ASCII is the first UTF-8 byte, signed: 'À' (C3 80) gives -61.
        Func::Ascii => Ok(Value::Int(
            s.bytes().next().map_or(0, |b| i64::from(b as i8)),
        )),
        Func::Chr => {
            let n = int_at(args, 0, 0);
            if n < 0 {
                return owned(String::new());
            }
            // Flink keeps the low byte: CHR(353) is 'a'; the byte is a Latin-1 character.
            owned(char::from((n & 0xff) as u8).to_string())
        }
        Func::Overlay => overlay(s, str_at(args, 1), int_at(args, 2, 1), args.get(3)),
        Func::ParseUrl => {
            let key = (args.len() > 2).then(|| str_at(args, 2));
            Ok(super::digest::parse_url(s, str_at(args, 1), key)
                .map_or(Value::Null, |p| Value::Str(Cow::Owned(p))))
        }
        _ => Err(OpError {
            blame: Blame::Here,
            reason: EvalReason::Invalid {
                op: func.name(),
                why: "not a string function".into(),
            },
        }),
    }
}

/// `CONCAT_WS(sep, s1, s2, ...)`: null when the separator is; null arguments are left out.
fn concat_ws<'a>(args: &[Value<'a>]) -> OpResult<'a> {
    let Some(Value::Str(sep)) = args.first() else {
        return Ok(Value::Null);
    };
    let mut out = String::new();
    let mut first = true;
    for v in &args[1..] {
        if v.is_null() {
            continue;
        }
        if !first {
            out.push_str(sep);
        }
        first = false;
        concat_piece(v, &mut out);
    }
    owned(out)
}

/// `LPAD`/`RPAD(s, len, pad)`: `s` cut or padded to `len` characters; null for a negative length
/// or an empty pad, as Flink.
fn pad<'a>(func: Func, s: &str, len: i64, pad: &str) -> OpResult<'a> {
    if len < 0 || pad.is_empty() {
        return Ok(Value::Null);
    }
    if len as u64 > MAX_BUILT as u64 / 4 {
        return Err(too_long(func.name()));
    }
    let len = len as usize;
    let chars = s.chars().count();
    if chars >= len {
        return owned(s.chars().take(len).collect());
    }
    let fill: String = pad.chars().cycle().take(len - chars).collect();
    owned(if func == Func::Lpad {
        fill + s
    } else {
        s.to_string() + &fill
    })
}

/// Calcite's `INITCAP`, which Flink uses: the first ASCII letter of each word upper case, the
/// others lower case; a word is a run of ASCII letters and digits.
fn initcap(s: &str) -> String {
    let mut start = true;
    s.chars()
        .map(|c| {
            let alnum = c.is_ascii_alphanumeric();
            let out = match (start, alnum) {
                (true, true) => c.to_ascii_uppercase(),
                (false, true) => c.to_ascii_lowercase(),
                _ => c,
            };
            start = !alnum;
            out
        })
        .collect()
}

/// `LOCATE(needle, s, from)`: the 1-based character position of the first `needle` in `s` at or
/// after `from` (a start before 1 is 1), 0 when there is none; an empty needle is at 1. Flink's
/// `SqlFunctionUtils.position` over `BinaryStringData.indexOf`.
fn locate(needle: &str, s: &str, from: i64) -> i64 {
    if needle.is_empty() {
        return 1;
    }
    let from = from.max(1);
    let Some((skip, _)) = s
        .char_indices()
        .nth((from - 1).min(i64::from(u32::MAX)) as usize)
    else {
        return 0;
    };
    match s[skip..].find(needle) {
        Some(b) => from + s[skip..skip + b].chars().count() as i64,
        None => 0,
    }
}

/// `OVERLAY(s PLACING r FROM start [FOR len])`: `s` with `len` characters (by default `r`'s
/// length) from `start` replaced by `r`; as Flink's `SqlFunctionUtils.overlay`, `s` unchanged for
/// a start outside it, and the tail after the replaced part kept only where it exists and `len`
/// is positive.
fn overlay<'a>(s: &str, r: &str, start: i64, len: Option<&Value<'_>>) -> OpResult<'a> {
    let count = s.chars().count() as i64;
    if start < 1 || start > count {
        return owned(s.to_string());
    }
    let len = match len {
        Some(Value::Int(n)) => *n,
        _ => r.chars().count() as i64,
    };
    let head = (start - 1) as usize;
    let mut out: String = s.chars().take(head).collect();
    out.push_str(r);
    if len > 0 && start - 1 + len <= count {
        out.extend(s.chars().skip(head + len as usize));
    }
    owned(out)
}
