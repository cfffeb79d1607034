//! The `Duration` config type: a whole number of a unit, written as a string ("500ms", "10s").
//!
//! Owns the one spelling durations have in a config file. A `Duration` can never be negative and
//! always fits an `i64` of milliseconds, so the plan can copy it without re-checking; whether zero
//! is allowed depends on where it is used and is decided by the plan.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};

/// What every duration error says is expected.
pub const EXPECTED_FORM: &str =
    "a whole number followed by a unit (ms, s, m, h, d), e.g. \"500ms\", \"10s\", \"1m\", \"1h\"";

/// A non-negative span of time with millisecond resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration {
    ms: i64,
}

/// Why a string is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration `{text}`: expected {EXPECTED_FORM}{hint}")]
pub struct DurationError {
    text: String,
    hint: &'static str,
}

impl Duration {
    pub const ZERO: Duration = Duration { ms: 0 };

    /// `None` for a negative value: durations in a config are never negative.
    pub const fn from_millis(ms: i64) -> Option<Duration> {
        if ms < 0 {
            None
        } else {
            Some(Duration { ms })
        }
    }

    /// Whole seconds; a `u32` cannot overflow the millisecond `i64`.
    pub const fn from_secs(secs: u32) -> Duration {
        Duration {
            ms: secs as i64 * 1_000,
        }
    }

    pub const fn as_millis(self) -> i64 {
        self.ms
    }

    pub fn parse(text: &str) -> Result<Duration, DurationError> {
        let fail = |hint: &'static str| DurationError {
            text: text.to_string(),
            hint,
        };
        let digits_end = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (digits, unit) = text.split_at(digits_end);
        if digits.is_empty() {
            return Err(fail(if text.starts_with('-') {
                " (durations cannot be negative)"
            } else {
                ""
            }));
        }
        if unit.is_empty() {
            return Err(fail(" (the unit is missing)"));
        }
        let per_unit: i64 = match unit {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ if unit.starts_with('.') => {
                return Err(fail(" (fractions are not supported; use a smaller unit)"))
            }
            _ => return Err(fail("")),
        };
        digits
            .parse::<i64>()
            .ok()
            .and_then(|n| n.checked_mul(per_unit))
            .map(|ms| Duration { ms })
            .ok_or_else(|| fail(" (too large)"))
    }
}

impl fmt::Display for Duration {
    /// The largest unit that divides the value exactly, so the text parses back to the same value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(i64, &str); 4] = [
            (86_400_000, "d"),
            (3_600_000, "h"),
            (60_000, "m"),
            (1_000, "s"),
        ];
        for (per_unit, unit) in UNITS {
            if self.ms != 0 && self.ms % per_unit == 0 {
                return write!(f, "{}{unit}", self.ms / per_unit);
            }
        }
        write!(f, "{}ms", self.ms)
    }
}

impl std::str::FromStr for Duration {
    type Err = DurationError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Duration::parse(s)
    }
}

/// Written back as whole milliseconds (`"60000ms"`): what a generated config says exactly.
impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}ms", self.ms))
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DurationVisitor;
        impl Visitor<'_> for DurationVisitor {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a duration string: {EXPECTED_FORM}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
                Duration::parse(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(DurationVisitor)
    }
}

/// A duration that may be negative (`"-5s"`): an interval join's bound, where the right row may
/// come before the left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignedDuration(pub i64);

impl SignedDuration {
    pub const fn as_millis(self) -> i64 {
        self.0
    }
}

impl fmt::Display for SignedDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        write!(
            f,
            "{sign}{}",
            Duration {
                ms: self.0.saturating_abs()
            }
        )
    }
}

impl Serialize for SignedDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}ms", self.0))
    }
}

impl<'de> Deserialize<'de> for SignedDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SignedDuration;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "a duration string, optionally negative: {EXPECTED_FORM} or -5s"
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SignedDuration, E> {
                match v.strip_prefix('-') {
                    Some(rest) => Duration::parse(rest).map(|d| SignedDuration(-d.ms)),
                    None => Duration::parse(v).map(|d| SignedDuration(d.ms)),
                }
                .map_err(E::custom)
            }
        }
        deserializer.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_forms_and_their_millisecond_values() {
        let table: &[(&str, i64)] = &[
            ("0s", 0),
            ("0ms", 0),
            ("1ms", 1),
            ("500ms", 500),
            ("10s", 10_000),
            ("1m", 60_000),
            ("90m", 5_400_000),
            ("1h", 3_600_000),
            ("1d", 86_400_000),
            ("007s", 7_000),
        ];
        for &(text, ms) in table {
            assert_eq!(
                Duration::parse(text).map(Duration::as_millis),
                Ok(ms),
                "{text}"
            );
        }
    }

    #[test]
    fn rejected_forms_say_what_is_expected() {
        for text in [
            "",
            "10",
            "-1s",
            "1.5s",
            "10 parsecs",
            "10 s",
            "s",
            "10S",
            "1w",
            " 1s",
            "1s ",
            "+1s",
        ] {
            let err = Duration::parse(text).expect_err(text).to_string();
            assert!(err.contains(&format!("`{text}`")), "{err}");
            assert!(err.contains("a whole number followed by a unit"), "{err}");
        }
        assert!(Duration::parse("-1s")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        assert!(Duration::parse("1.5s")
            .unwrap_err()
            .to_string()
            .contains("fractions"));
        assert!(Duration::parse("10")
            .unwrap_err()
            .to_string()
            .contains("unit is missing"));
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        // i64::MAX ms is 106 751 991 167 whole days; one more day must not wrap around.
        assert!(Duration::parse("106751991167d").is_ok());
        assert!(Duration::parse("106751991168d")
            .unwrap_err()
            .to_string()
            .contains("too large"));
        assert!(Duration::parse("99999999999999999999ms").is_err());
    }

    #[test]
    fn display_round_trips() {
        for ms in [
            0, 1, 999, 1_000, 1_500, 60_000, 61_000, 3_600_000, 86_400_000, 90_000_000,
        ] {
            let d = Duration::from_millis(ms).unwrap();
            assert_eq!(Duration::parse(&d.to_string()), Ok(d), "{d}");
        }
        assert_eq!(Duration::from_millis(60_000).unwrap().to_string(), "1m");
        assert_eq!(Duration::from_millis(-1), None);
    }
}
