//! Calendar arithmetic on epoch milliseconds (UTC, proleptic Gregorian calendar).
//!
//! `format` supports the years 0000 to 9999 that RFC 3339 can write; `truncate` works on the
//! whole `i64` range and rounds toward negative infinity, so `-1` ms truncates to the previous
//! second, not to 0.

use std::fmt::Write as _;

use super::error::EvalReason;

const MS_PER_DAY: i64 = 86_400_000;
/// 0000-01-01T00:00:00.000Z.
const MIN_MS: i64 = -62_167_219_200_000;
/// 9999-12-31T23:59:59.999Z.
const MAX_MS: i64 = 253_402_300_799_999;

/// The length in milliseconds of a unit accepted by `truncate_time`.
pub(super) fn unit_ms(unit: &str) -> Option<i64> {
    match unit {
        "second" => Some(1_000),
        "minute" => Some(60_000),
        "hour" => Some(3_600_000),
        "day" => Some(MS_PER_DAY),
        _ => None,
    }
}

/// `ts` rounded down to a whole `unit`.
pub(super) fn truncate(ts: i64, unit: &str) -> Result<i64, EvalReason> {
    let unit_ms = unit_ms(unit).ok_or_else(|| EvalReason::TimeUnit(unit.to_owned()))?;
    // Near i64::MIN the start of the unit lies before the representable range.
    ts.div_euclid(unit_ms)
        .checked_mul(unit_ms)
        .ok_or(EvalReason::IntOverflow {
            op: "truncate_time",
        })
}

/// `ts` as RFC 3339 UTC text with milliseconds: `2026-11-29T12:00:00.000Z`.
pub(super) fn format(ts: i64) -> Result<String, EvalReason> {
    if !(MIN_MS..=MAX_MS).contains(&ts) {
        return Err(EvalReason::TimeRange(ts));
    }
    let days = ts.div_euclid(MS_PER_DAY);
    let ms_of_day = ts.rem_euclid(MS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let (hour, minute) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60);
    let (second, milli) = (ms_of_day / 1_000 % 60, ms_of_day % 1_000);
    let mut out = String::with_capacity(24);
    // Writing into a String cannot fail.
    let _ = write!(
        out,
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z"
    );
    Ok(out)
}

/// `ts` as Flink's JSON format writes a SQL `TIMESTAMP(3)`: `2026-11-29 12:00:00.5`, the
/// fraction without trailing zeros and left out when the milliseconds are 0 (Flink's
/// `SQL_TIMESTAMP_FORMAT`, `appendFraction(NANO_OF_SECOND, 0, 9, true)`).
pub(super) fn format_sql(ts: i64) -> Result<String, EvalReason> {
    let mut out = Vec::with_capacity(23);
    write_sql(ts, &mut out)?;
    // Only ASCII digits and separators were written.
    Ok(String::from_utf8(out).unwrap_or_default())
}

/// Appends [`format_sql`]'s text to `out` without allocating (a select writing a timestamp
/// column for every record goes through this).
pub fn write_sql(ts: i64, out: &mut Vec<u8>) -> Result<(), EvalReason> {
    if !(MIN_MS..=MAX_MS).contains(&ts) {
        return Err(EvalReason::TimeRange(ts));
    }
    let days = ts.div_euclid(MS_PER_DAY);
    let ms_of_day = ts.rem_euclid(MS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    // In range, every part is non-negative and fits its digits. Two digits at a time by constant
    // divisors (multiplications): this runs for every TIMESTAMP column of every row written.
    let two = |out: &mut Vec<u8>, v: i64| {
        out.extend_from_slice(&[b'0' + (v / 10) as u8, b'0' + (v % 10) as u8])
    };
    two(out, year / 100);
    two(out, year % 100);
    out.push(b'-');
    two(out, i64::from(month));
    out.push(b'-');
    two(out, i64::from(day));
    out.push(b' ');
    two(out, ms_of_day / 3_600_000);
    out.push(b':');
    two(out, ms_of_day / 60_000 % 60);
    out.push(b':');
    two(out, ms_of_day / 1_000 % 60);
    let milli = ms_of_day % 1_000;
    if milli != 0 {
        let d = [
            b'.',
            b'0' + (milli / 100) as u8,
            b'0' + (milli / 10 % 10) as u8,
            b'0' + (milli % 10) as u8,
        ];
        // Trailing zeros left out: `.5`, `.05`, `.005`.
        let keep = if milli % 100 == 0 {
            2
        } else if milli % 10 == 0 {
            3
        } else {
            4
        };
        out.extend_from_slice(&d[..keep]);
    }
    Ok(())
}

/// Year, month (1-12) and day (1-31) of the day `days` after 1970-01-01.
///
/// Howard Hinnant's `civil_from_days`: shift to eras of 400 years (146,097 days) starting on
/// 0000-03-01, so leap days fall at the end of each shifted year.
pub(super) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097); // [0, 146096]
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365; // [0, 399]
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100); // [0, 365]
    let shifted_month = (5 * day_of_year + 2) / 153; // [0, 11], March = 0
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1; // [1, 31]
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    }; // [1, 12]
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    // Both are in range by the comments above.
    (year, month as u32, day as u32)
}

/// `ts` written by a Java date pattern, as Flink's `DATE_FORMAT` does (in UTC): `yyyy` / `yy`,
/// `MM` / `M`, `dd` / `d`, `HH` / `H`, `mm` / `m`, `ss` / `s`, `S`..`SSS` (the leading digits of
/// the milliseconds), text in single quotes (`''` is a quote), any other non-letter as it is.
pub(super) fn date_format(ts: i64, pattern: &str) -> Result<String, EvalReason> {
    if !(MIN_MS..=MAX_MS).contains(&ts) {
        return Err(EvalReason::TimeRange(ts));
    }
    let days = ts.div_euclid(MS_PER_DAY);
    let ms_of_day = ts.rem_euclid(MS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let fields = [
        ('y', year),
        ('M', i64::from(month)),
        ('d', i64::from(day)),
        ('H', ms_of_day / 3_600_000),
        ('m', ms_of_day / 60_000 % 60),
        ('s', ms_of_day / 1_000 % 60),
    ];
    let milli = ms_of_day % 1_000;
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|&&x| x == c).count();
        if c == '\'' {
            // '' is a quote; 'text' is text.
            if run >= 2 {
                out.push('\'');
                i += 2;
                continue;
            }
            let Some(end) = chars[i + 1..].iter().position(|&x| x == '\'') else {
                return Err(EvalReason::DatePattern(pattern.to_string()));
            };
            out.extend(&chars[i + 1..i + 1 + end]);
            i += end + 2;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            out.push(c);
            i += 1;
            continue;
        }
        match (c, fields.iter().find(|(f, _)| *f == c)) {
            ('y', _) if run == 2 => {
                let _ = write!(out, "{:02}", year.rem_euclid(100));
            }
            (_, Some((_, v))) => {
                let _ = write!(out, "{v:0run$}");
            }
            ('S', None) if run <= 3 => {
                let digits = format!("{milli:03}");
                out.push_str(&digits[..run]);
            }
            _ => return Err(EvalReason::DatePattern(pattern.to_string())),
        }
        i += run;
    }
    Ok(out)
}

/// Whether `date_format` takes `pattern`.
pub(super) fn date_pattern_ok(pattern: &str) -> bool {
    date_format(0, pattern).is_ok()
}
