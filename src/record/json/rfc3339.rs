//! RFC 3339 timestamps to epoch milliseconds ([`parse_rfc3339_ms`]), for event times given as
//! strings, with the proleptic Gregorian calendar arithmetic it needs.

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// RFC 3339 timestamp (the string's content, no quotes), e.g. `2023-11-14T22:13:20.123Z` or with
/// a `+02:00` offset, fraction of 1..=9 digits optional, to epoch milliseconds (fraction truncated
/// toward -inf). Accepts `t`/space for `T` and `z` for `Z`; second 60 (a leap second) counts as the
/// first second of the next minute. Years 0000..=9999 only. None if malformed or out of range.
pub fn parse_rfc3339_ms(s: &[u8]) -> Option<i64> {
    let num = |at: usize, n: usize| -> Option<i64> {
        s.get(at..at + n)?.iter().try_fold(0i64, |v, &c| {
            c.is_ascii_digit().then(|| v * 10 + i64::from(c - b'0'))
        })
    };
    let sep = |at: usize, ok: &[u8]| s.get(at).is_some_and(|c| ok.contains(c));
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, min, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let mut i = 19;
    let mut nanos = 0i64;
    if s.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while let Some(c) = s.get(i).filter(|c| c.is_ascii_digit()) {
            nanos = nanos * 10 + i64::from(c - b'0');
            i += 1;
            if i - start > 9 {
                return None;
            }
        }
        if i == start {
            return None;
        }
        nanos *= 10i64.pow((9 - (i - start)) as u32);
    }
    let offset_min = match *s.get(i)? {
        b'Z' | b'z' => {
            i += 1;
            0
        }
        c @ (b'+' | b'-') => {
            let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if !sep(i + 3, b":") || oh > 23 || om > 59 {
                return None;
            }
            i += 6;
            if c == b'-' {
                -(oh * 60 + om)
            } else {
                oh * 60 + om
            }
        }
        _ => return None,
    };
    let valid = i == s.len()
        && (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour <= 23
        && min <= 59
        && sec <= 60;
    if !valid {
        return None;
    }
    let secs =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec - offset_min * 60;
    // nanos >= 0, so integer division floors the whole value toward -inf.
    Some(secs * 1000 + nanos / 1_000_000)
}
