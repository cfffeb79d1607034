//! Reading dates and times by a Java pattern, as Flink does: `TO_TIMESTAMP`/`TO_DATE` with
//! `java.time.DateTimeFormatter` (the whole text must match; a day past the month's end becomes
//! its last day, the SMART resolver), `UNIX_TIMESTAMP` with `java.text.SimpleDateFormat` (lenient:
//! a field past its range rolls over, text after the pattern is ignored). Letters: `y` (`yy` is
//! 2000-2099), `M`/`MM` (`MMM` a month's short English name, `MMMM` its full one), `d`, `H`, `h`
//! with `a` (AM/PM), `m`, `s`, `S` (fraction, cut to milliseconds), `'text'`; other characters
//! must appear as written. The result is epoch milliseconds in UTC.

use super::{days_from_civil, days_in_month, MS_PER_DAY};

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

#[derive(Default)]
struct Fields {
    year: Option<i64>,
    month: Option<i64>,
    day: Option<i64>,
    hour: i64,
    pm: Option<bool>,
    twelve: bool,
    minute: i64,
    second: i64,
    milli: i64,
}

struct Reader<'s> {
    text: &'s [u8],
    at: usize,
}

impl Reader<'_> {
    /// Between `min` and `max` ASCII digits.
    fn digits(&mut self, min: usize, max: usize) -> Option<i64> {
        let run = self.text[self.at..]
            .iter()
            .take(max)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if run < min {
            return None;
        }
        let s = std::str::from_utf8(&self.text[self.at..self.at + run]).ok()?;
        self.at += run;
        s.parse().ok()
    }

    fn literal(&mut self, c: char) -> Option<()> {
        let mut buf = [0; 4];
        let bytes = c.encode_utf8(&mut buf).as_bytes();
        self.text[self.at..]
            .starts_with(bytes)
            .then(|| self.at += bytes.len())
    }

    fn month_name(&mut self, full: bool) -> Option<i64> {
        let rest = &self.text[self.at..];
        let (i, len) = MONTHS.iter().enumerate().find_map(|(i, name)| {
            let name = if full {
                name.as_bytes()
            } else {
                &name.as_bytes()[..3]
            };
            (rest.len() >= name.len() && rest[..name.len()].eq_ignore_ascii_case(name))
                .then_some((i, name.len()))
        })?;
        self.at += len;
        Some(i as i64 + 1)
    }
}

/// Whether the pattern letter at `i` starts a numeric field written right after the one before
/// (`yyyyMMdd`): then the field before takes exactly its width.
fn adjacent_number(pattern: &[char], i: usize) -> bool {
    pattern.get(i).is_some_and(|c| "yMdHhmsS".contains(*c))
}

/// The fraction digits `v` (`n` of them) as milliseconds, cut after the third digit.
fn millis(v: i64, n: usize) -> i64 {
    match n {
        // Past 21 digits an i64 has no digit left at the milliseconds (and 10^n overflows).
        n if n > 21 => 0,
        n if n >= 3 => v / 10_i64.pow(n as u32 - 3),
        n => v * 10_i64.pow(3 - n as u32),
    }
}

/// Reads `text` by `pattern` into fields; `whole`: the text must end with the pattern.
fn read(text: &str, pattern: &str, whole: bool) -> Option<Fields> {
    let p: Vec<char> = pattern.chars().collect();
    let mut r = Reader {
        text: text.as_bytes(),
        at: 0,
    };
    let mut f = Fields::default();
    let mut i = 0;
    while i < p.len() {
        let c = p[i];
        let run = p[i..].iter().take_while(|&&x| x == c).count();
        if c == '\'' {
            if run >= 2 {
                r.literal('\'')?;
                i += 2;
                continue;
            }
            let end = p[i + 1..].iter().position(|&x| x == '\'')?;
            for &lc in &p[i + 1..i + 1 + end] {
                r.literal(lc)?;
            }
            i += end + 2;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            r.literal(c)?;
            i += 1;
            continue;
        }
        let fixed = adjacent_number(&p, i + run);
        // A two-digit field: exactly its width when another number follows it directly.
        let (min, max) = if fixed { (run, run) } else { (1, 2.max(run)) };
        match c {
            'y' if run == 2 => f.year = Some(2000 + r.digits(2, 2)?),
            'y' if fixed => f.year = Some(r.digits(run, run)?),
            'y' => f.year = Some(r.digits(run.min(4), 9)?),
            'M' if run >= 3 => f.month = Some(r.month_name(run >= 4)?),
            'M' => f.month = Some(r.digits(min, max)?),
            'd' => f.day = Some(r.digits(min, max)?),
            'H' => f.hour = r.digits(min, max)?,
            'h' => {
                f.hour = r.digits(min, max)?;
                f.twelve = true;
            }
            'm' => f.minute = r.digits(min, max)?,
            's' => f.second = r.digits(min, max)?,
            // A fraction for DateTimeFormatter; SimpleDateFormat (lenient) reads milliseconds.
            'S' => {
                let start = r.at;
                let v = r.digits(1, if fixed { run } else { 9 })?;
                f.milli = if whole { millis(v, r.at - start) } else { v };
            }
            'a' => {
                let pm = match r.text.get(r.at..r.at + 2).map(|b| b.to_ascii_uppercase()) {
                    Some(b) if b == b"AM" => false,
                    Some(b) if b == b"PM" => true,
                    _ => return None,
                };
                r.at += 2;
                f.pm = Some(pm);
            }
            _ => return None,
        }
        i += run;
    }
    (!whole || r.at == r.text.len()).then_some(f)
}

fn hour_of_day(f: &Fields) -> i64 {
    match (f.twelve, f.pm) {
        (true, Some(true)) => f.hour % 12 + 12,
        (true, _) => f.hour % 12,
        (false, Some(true)) if f.hour < 12 => f.hour + 12,
        _ => f.hour,
    }
}

/// The fields as epoch milliseconds: checked and resolved as `DateTimeFormatter`'s SMART
/// resolver does (a day past the month's end is its last day), or leniently rolled over.
fn resolve(f: &Fields, lenient: bool) -> Option<i64> {
    let (year, month, day) = (
        f.year.unwrap_or(1970),
        f.month.unwrap_or(1),
        f.day.unwrap_or(1),
    );
    let hour = hour_of_day(f);
    // Fields of up to 18 digits each (a long pattern letter run): checked, never wrapped.
    let time = hour
        .checked_mul(60)?
        .checked_add(f.minute)?
        .checked_mul(60)?
        .checked_add(f.second)?
        .checked_mul(1000)?
        .checked_add(f.milli)?;
    if !lenient {
        let ok = (1..=12).contains(&month)
            && (1..=31).contains(&day)
            && (0..24).contains(&hour)
            && (0..60).contains(&f.minute)
            && (0..60).contains(&f.second)
            && (-999_999..=999_999).contains(&year);
        if !ok {
            return None;
        }
        let day = day.min(i64::from(days_in_month(year, month as u32)));
        let days = days_from_civil(year, month as u32, day as u32);
        return days.checked_mul(MS_PER_DAY)?.checked_add(time);
    }
    if !(-999_999..=999_999).contains(&year) || month.abs() > 1_000_000 || day.abs() > 100_000_000 {
        return None;
    }
    let total = year * 12 + month - 1;
    let (y, m) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
    let days = days_from_civil(y, m, 1) + day - 1;
    days.checked_mul(MS_PER_DAY)?.checked_add(time)
}

/// `TO_TIMESTAMP(s [, fmt])`: by `fmt`, or without one as Flink's default reads a timestamp:
/// `yyyy-M-d`, optionally followed by ` H:m:s` and a fraction of up to 9 digits. Text that `fmt`
/// does not read falls back, as in Flink, to JDBC's lenient `Timestamp.valueOf` (with a space) or
/// `Date.valueOf` (without): 30 February is then 1 March.
pub(super) fn timestamp(s: &str, fmt: Option<&str>) -> Option<i64> {
    match fmt {
        Some(fmt) => read(s, fmt, true)
            .and_then(|f| resolve(&f, false))
            .or_else(|| jdbc(s.trim())),
        None => resolve(&default_fields(s)?, false),
    }
}

/// `yyyy-M-d[ H:m:s[.fffffffff]]`, the whole text.
fn default_fields(s: &str) -> Option<Fields> {
    read(s, "yyyy-M-d", true)
        .or_else(|| read(s, "yyyy-M-d H:m:s", true))
        .or_else(|| {
            let (head, frac) = s.rsplit_once('.')?;
            let n = frac.len();
            if !(1..=9).contains(&n) || !frac.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let mut f = read(head, "yyyy-M-d H:m:s", true)?;
            f.milli = millis(frac.parse().ok()?, n);
            Some(f)
        })
}

/// JDBC's `Timestamp.valueOf` / `Date.valueOf`: the default form, month 1-12 and day 1-31
/// checked, the rest rolled over (a day past the month's end runs into the next).
fn jdbc(s: &str) -> Option<i64> {
    let f = default_fields(s)?;
    let (m, d) = (f.month.unwrap_or(1), f.day.unwrap_or(1));
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
        || f.hour > 23
        || f.minute > 59
        || f.second > 59
    {
        return None;
    }
    resolve(&f, true)
}

/// `UNIX_TIMESTAMP(s, fmt)`'s reading: lenient, epoch milliseconds.
pub(super) fn lenient(s: &str, fmt: &str) -> Option<i64> {
    resolve(&read(s, fmt, false)?, true)
}

/// `TO_DATE(s [, fmt])`: the day (since 1970-01-01) `s` names. By `fmt` as `UNIX_TIMESTAMP`
/// reads (leniently); without one as Flink's `parseDate`: the text before a space, `yyyy-M-d`
/// (an invalid date is `None`) or a year alone (its 1 January).
pub(super) fn date(s: &str, fmt: Option<&str>) -> Option<i64> {
    if let Some(fmt) = fmt {
        return lenient(s, fmt).map(|ms| ms.div_euclid(MS_PER_DAY));
    }
    let head = s.split(' ').next().unwrap_or(s).trim();
    let f = if head.contains('-') {
        read(head, "yyyy-M-d", true)?
    } else {
        let year = head.parse::<i64>().ok()?;
        Fields {
            year: Some(year),
            ..Fields::default()
        }
    };
    if !(1..=9999).contains(&f.year.unwrap_or(0)) {
        return None;
    }
    resolve_exact(&f).map(|ms| ms.div_euclid(MS_PER_DAY))
}

/// The fields as epoch milliseconds where they name a real date (no day past the month's end).
fn resolve_exact(f: &Fields) -> Option<i64> {
    let (y, m, d) = (
        f.year.unwrap_or(1970),
        f.month.unwrap_or(1),
        f.day.unwrap_or(1),
    );
    if !(1..=12).contains(&m) || d < 1 || d > i64::from(days_in_month(y, m as u32)) {
        return None;
    }
    resolve(f, false)
}
