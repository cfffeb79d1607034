//! Hand-computed cases for every built-in function, including Unicode and calendar boundaries.

use super::reference_calls;
use super::{compile_err, eval_err, v};
use crate::expr::{time, EvalReason, ExprErrorKind};

#[test]
fn coalesce_takes_the_first_non_null_lazily() {
    assert_eq!(v("coalesce(none, missing, 3)"), "3");
    assert_eq!(v("coalesce(none)"), "null");
    assert_eq!(v("coalesce(name, 'x')"), r#""Ada""#);
    assert_eq!(v("coalesce(qty, qty / zero)"), "3");
    assert_eq!(v("coalesce(none, 1.5) * 2"), "3.0");
}

#[test]
fn lower_and_upper_are_unicode_aware() {
    assert_eq!(v("lower('ÀB c')"), r#""àb c""#);
    assert_eq!(v("upper('ß')"), r#""SS""#);
    assert_eq!(v("upper('straße')"), r#""STRASSE""#);
    assert_eq!(v("lower('ΣΑΣ')"), r#""σας""#);
    assert_eq!(v("upper(name)"), r#""ADA""#);
    assert_eq!(v("lower('already')"), r#""already""#);
    assert_eq!(v("lower(none)"), "null");
    let e = eval_err("lower(qty)");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Type {
            op: "lower",
            expected: "a string",
            found: "int"
        }
    );
    assert_eq!(compile_err("upper(1)").kind, ExprErrorKind::Type);
}

#[test]
fn len_counts_characters() {
    assert_eq!(v("len('héllo')"), "5");
    assert_eq!(v("len('')"), "0");
    assert_eq!(v("len('日本語')"), "3");
    // Two code points each: a base letter with a combining accent, and an emoji with a modifier.
    assert_eq!(v("len('e\\u0301')"), "2");
    assert_eq!(v("len('👍🏽')"), "2");
    assert_eq!(v("len(name)"), "3");
    assert_eq!(v("len(none)"), "null");
}

#[test]
fn string_predicates() {
    let cases = [
        ("starts_with('héllo', 'hé')", "true"),
        ("starts_with('héllo', 'é')", "false"),
        ("ends_with('héllo', 'lo')", "true"),
        ("ends_with(name, 'A')", "false"),
        ("contains('abc', '')", "true"),
        ("contains('abc', 'bc')", "true"),
        ("contains(none, 'a')", "null"),
        ("starts_with(name, none)", "null"),
    ];
    for (text, expected) in cases {
        assert_eq!(v(text), expected, "{text}");
    }
    assert_eq!(compile_err("starts_with(1, 'a')").kind, ExprErrorKind::Type);
    let e = eval_err("contains(name, qty)");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Type {
            op: "contains",
            expected: "a string",
            found: "int"
        }
    );
    assert_eq!(e.column(), 16);
}

#[test]
fn concat_writes_numbers_and_propagates_null() {
    assert_eq!(v("concat('a', 1, 2.50, true)"), r#""a12.50true""#);
    assert_eq!(v("concat(name, '-', qty)"), r#""Ada-3""#);
    assert_eq!(v("concat(name)"), r#""Ada""#);
    assert_eq!(v("concat('a', none)"), "null");
}

#[test]
fn abs() {
    assert_eq!(v("abs(-3)"), "3");
    assert_eq!(v("abs(3)"), "3");
    assert_eq!(v("abs(-2.50)"), "2.50");
    assert_eq!(v("abs(none)"), "null");
    assert_eq!(
        *eval_err("abs(small)").reason(),
        EvalReason::IntOverflow { op: "abs" }
    );
    assert_eq!(
        compile_err("abs(-9223372036854775808)").kind,
        ExprErrorKind::Constant
    );
}

#[test]
fn round_is_half_away_from_zero() {
    let cases = [
        ("round(2.5)", "3"),
        ("round(-2.5)", "-3"),
        ("round(2.4)", "2"),
        ("round(0.5)", "1"),
        ("round(1.005, 2)", "1.01"),
        ("round(-1.005, 2)", "-1.01"),
        // Banker's rounding would give 2.34.
        ("round(2.345, 2)", "2.35"),
        ("round(2.5, 0)", "3"),
        ("round(1.5, 3)", "1.5"),
        ("round(7)", "7"),
        ("round(7, 2)", "7"),
        ("round(half)", "3"),
        ("round(amount * table.rate, 2)", "21.66"),
        ("round(none, 2)", "null"),
        ("round(half, none)", "null"),
    ];
    for (text, expected) in cases {
        assert_eq!(v(text), expected, "{text}");
    }
    assert_eq!(compile_err("round(half, 29)").kind, ExprErrorKind::Type);
    assert_eq!(compile_err("round(half, 1.5)").kind, ExprErrorKind::Type);
    assert_eq!(
        *eval_err("round(half, digits)").reason(),
        EvalReason::RoundDigits(99)
    );
    assert_eq!(
        *eval_err("round(half, neg)").reason(),
        EvalReason::RoundDigits(-7)
    );
}

#[test]
fn floor_and_ceil() {
    let cases = [
        ("floor(2.7)", "2"),
        ("floor(-2.1)", "-3"),
        ("floor(-2.0)", "-2"),
        ("ceil(2.1)", "3"),
        ("ceil(-2.7)", "-2"),
        ("floor(5)", "5"),
        ("ceil(neg)", "-7"),
        ("floor(none)", "null"),
    ];
    for (text, expected) in cases {
        assert_eq!(v(text), expected, "{text}");
    }
    assert_eq!(compile_err("floor('a')").kind, ExprErrorKind::Type);
}

#[test]
fn min_and_max() {
    let cases = [
        ("min(3, 1.5, 2)", "1.5"),
        ("max(3, 1.5)", "3"),
        ("max(1, 1.0)", "1"),
        ("max(1.0, 1)", "1.0"),
        ("min(qty)", "3"),
        ("min('b', 'a', 'c')", r#""a""#),
        ("max(name, 'B')", r#""B""#),
        ("max(name, 'Abc')", r#""Ada""#),
        ("min(1, none)", "null"),
        ("max(none, 1)", "null"),
        ("max(small, big, neg)", "9223372036854775807"),
    ];
    for (text, expected) in cases {
        assert_eq!(v(text), expected, "{text}");
    }
    assert_eq!(compile_err("min(1, 'a')").kind, ExprErrorKind::Type);
    assert_eq!(compile_err("max(true, 1)").kind, ExprErrorKind::Type);
    let e = eval_err("max(qty, name)");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Incomparable {
            op: "max",
            left: "int",
            right: "string"
        }
    );
    assert_eq!(e.column(), 10);
}

#[test]
fn truncate_time() {
    let cases = [
        ("truncate_time(1700000123456, 'second')", "1700000123000"),
        ("truncate_time(1700000123456, 'minute')", "1700000100000"),
        ("truncate_time(1700000123456, 'hour')", "1699999200000"),
        ("truncate_time(1700000123456, 'day')", "1699920000000"),
        ("truncate_time(1700000100000, 'minute')", "1700000100000"),
        // Before 1970 it still rounds down, to the previous unit.
        ("truncate_time(-1, 'second')", "-1000"),
        ("truncate_time(-1, 'day')", "-86400000"),
        ("truncate_time(-86400000, 'day')", "-86400000"),
        ("truncate_time(ts + 59999, 'minute') == ts", "true"),
        ("truncate_time(none, 'day')", "null"),
        ("truncate_time(ts, none)", "null"),
    ];
    for (text, expected) in cases {
        assert_eq!(v(text), expected, "{text}");
    }
    assert_eq!(
        *eval_err("truncate_time(ts, unit)").reason(),
        EvalReason::TimeUnit("week".into())
    );
    assert_eq!(
        *eval_err("truncate_time(small, 'day')").reason(),
        EvalReason::IntOverflow {
            op: "truncate_time"
        }
    );
    assert_eq!(compile_err("truncate_time(ts, 'week')").column, 19);
    assert_eq!(
        compile_err("truncate_time(1.5, 'day')").kind,
        ExprErrorKind::Type
    );
    let e = eval_err("truncate_time(amount, 'day')");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Type {
            op: "truncate_time",
            expected: "an int (epoch milliseconds)",
            found: "decimal"
        }
    );
}

#[test]
fn format_time() {
    let cases = [
        ("ts", "2026-11-29T12:00:00.000Z"),
        ("0", "1970-01-01T00:00:00.000Z"),
        ("-1", "1969-12-31T23:59:59.999Z"),
        ("951782400000", "2000-02-29T00:00:00.000Z"),
        ("951868800000", "2000-03-01T00:00:00.000Z"),
        ("-2203977600000", "1900-02-28T00:00:00.000Z"),
        ("-2203891200000", "1900-03-01T00:00:00.000Z"),
        ("1709251199999", "2024-02-29T23:59:59.999Z"),
        ("-11670953103211", "1600-02-29T12:34:56.789Z"),
        ("-62167219200000", "0000-01-01T00:00:00.000Z"),
        ("253402300799999", "9999-12-31T23:59:59.999Z"),
    ];
    for (ts, expected) in cases {
        assert_eq!(
            v(&format!("format_time({ts})")),
            format!("\"{expected}\""),
            "{ts}"
        );
    }
    assert_eq!(v("format_time(none)"), "null");
    assert_eq!(
        compile_err("format_time(253402300800000)").kind,
        ExprErrorKind::Constant
    );
    assert_eq!(
        *eval_err("format_time(small)").reason(),
        EvalReason::TimeRange(i64::MIN)
    );
    assert_eq!(
        *eval_err("format_time(big)").reason(),
        EvalReason::TimeRange(i64::MAX)
    );
    assert_eq!(
        *eval_err("format_time(-62167219200001 + zero)").reason(),
        EvalReason::TimeRange(-62_167_219_200_001)
    );
}

#[test]
fn calendar_matches_the_naive_reference_across_the_range() {
    // Every 997th day from 0000 to 9999 and the days around each year boundary in 1895-2105.
    let mut days: Vec<i64> = (-719_528..2_932_897).step_by(997).collect();
    for year_start in (-27_000..49_000).step_by(365) {
        days.extend(year_start - 3..year_start + 3);
    }
    for day in days {
        for ms in [0, 1, 86_399_999] {
            let ts = day * 86_400_000 + ms;
            assert_eq!(
                time::format(ts).ok(),
                reference_calls::naive_format(ts).ok(),
                "{ts}"
            );
        }
    }
}

#[test]
fn sql_timestamp_writes_flink_json_sql_timestamps() {
    let cases = [
        ("0", "1970-01-01 00:00:00"),
        ("-1", "1969-12-31 23:59:59.999"),
        ("1500", "1970-01-01 00:00:01.5"),
        ("1020", "1970-01-01 00:00:01.02"),
        ("1050", "1970-01-01 00:00:01.05"),
        ("1005", "1970-01-01 00:00:01.005"),
        ("1100", "1970-01-01 00:00:01.1"),
        ("1700000000123", "2023-11-14 22:13:20.123"),
        ("-62167219200000", "0000-01-01 00:00:00"),
        ("951782400007", "2000-02-29 00:00:00.007"),
        ("253402300799999", "9999-12-31 23:59:59.999"),
    ];
    for (ts, expected) in cases {
        assert_eq!(
            v(&format!("sql_timestamp({ts})")),
            format!("\"{expected}\""),
            "{ts}"
        );
    }
    assert_eq!(v("sql_timestamp(none)"), "null");
    assert_eq!(
        *eval_err("sql_timestamp(big)").reason(),
        EvalReason::TimeRange(i64::MAX)
    );
}

#[test]
fn casts_follow_flinks_rules() {
    // to_int: decimals truncate toward zero, strings are read trimmed, booleans are 1 and 0.
    assert_eq!(v("to_int(amount)"), "19");
    assert_eq!(v("to_int(-1.9)"), "-1");
    assert_eq!(v("to_int(' 42 ')"), "42");
    assert_eq!(v("to_int(flag)"), "1");
    assert_eq!(v("to_int(no)"), "0");
    assert_eq!(v("to_int(none)"), "null");
    assert_eq!(
        eval_err("to_int(name)").reason().clone(),
        EvalReason::Cast {
            op: "to_int",
            text: "Ada".into(),
            expected: "an integer"
        }
    );
    // A constant that cannot be cast is refused when the expression is compiled.
    assert!(compile_err("to_int(99999999999999999999.5)")
        .message
        .contains("integer overflow"));
    assert!(compile_err("to_int('4x')")
        .message
        .contains("is not an integer"));
    // to_decimal: rounded half away from zero to the scale, which is kept (padded).
    assert_eq!(v("to_decimal(amount, 1)"), "20.0");
    assert_eq!(v("to_decimal(-0.125, 2)"), "-0.13");
    assert_eq!(v("to_decimal(qty, 2)"), "3.00");
    assert_eq!(v("to_decimal('1.5', 4)"), "1.5000");
    assert_eq!(v("to_decimal(-0.001, 2)"), "0.00");
    assert_eq!(v("to_decimal(none, 2)"), "null");
    assert!(matches!(
        eval_err("to_decimal(name, 2)").reason(),
        EvalReason::Cast { .. }
    ));
    // to_string: numbers as written (a decimal with its scale), booleans as Flink writes them.
    assert_eq!(v("to_string(qty)"), r#""3""#);
    assert_eq!(v("to_string(to_decimal(amount, 4))"), r#""19.9900""#);
    assert_eq!(v("to_string(flag)"), r#""TRUE""#);
    assert_eq!(v("to_string(name)"), r#""Ada""#);
    assert_eq!(v("to_string(none)"), "null");
    assert_eq!(compile_err("to_decimal(qty, 29)").kind, ExprErrorKind::Type);
}

#[test]
fn date_format_writes_java_patterns_in_utc() {
    // 1700000000123 ms is 2023-11-14 22:13:20.123 UTC.
    let f = |p: &str| v(&format!("date_format(1700000000123, \"{p}\")"));
    assert_eq!(f("yyyy-MM-dd HH:mm:ss.SSS"), r#""2023-11-14 22:13:20.123""#);
    assert_eq!(f("yy/M/d H:m:s"), r#""23/11/14 22:13:20""#);
    assert_eq!(f("yyyyMMdd"), r#""20231114""#);
    assert_eq!(f("HH:mm:ss.S"), r#""22:13:20.1""#);
    assert_eq!(f("'day' d 'of' MM"), r#""day 14 of 11""#);
    assert_eq!(f("HH''mm"), r#""22'13""#);
    assert_eq!(v("date_format(0, 'yyyy-MM-dd')"), r#""1970-01-01""#);
    assert_eq!(
        v("date_format(-1, 'yyyy-MM-dd HH:mm:ss.SSS')"),
        r#""1969-12-31 23:59:59.999""#
    );
    assert_eq!(v("date_format(none, 'yyyy')"), "null");
    for bad in ["yyyy-MM-dd EEE", "hh:mm a", "'unclosed"] {
        let e = compile_err(&format!("date_format(qty, \"{bad}\")"));
        assert!(e.message.contains("date pattern"), "{bad}: {}", e.message);
    }
    assert!(matches!(
        eval_err("date_format(qty, name)").reason(),
        EvalReason::DatePattern(_)
    ));
}

#[test]
fn substr_trim_replace_and_split_index_follow_flink() {
    assert_eq!(v("substr('héllo', 2)"), r#""éllo""#);
    assert_eq!(v("substr('héllo', 2, 3)"), r#""éll""#);
    assert_eq!(v("substr('hello', 0, 2)"), r#""he""#);
    assert_eq!(v("substr('hello', -3)"), r#""llo""#);
    assert_eq!(v("substr('hello', -9, 2)"), r#""he""#);
    assert_eq!(v("substr('hello', 9)"), r#""""#);
    assert_eq!(v("substr('hello', 2, -1)"), r#""""#);
    assert_eq!(v("substr(none, 1)"), "null");
    assert_eq!(v("trim('  a b  ')"), r#""a b""#);
    assert_eq!(v("trim(name)"), r#""Ada""#);
    assert_eq!(v("replace('a-b-c', '-', '+')"), r#""a+b+c""#);
    assert_eq!(v("replace('abc', '', 'x')"), r#""abc""#);
    assert_eq!(v("split_index('a/b/c', '/', 1)"), r#""b""#);
    assert_eq!(v("split_index('a/b/c', '/', 3)"), "null");
    assert_eq!(v("split_index('a/b/c', '/', -1)"), "null");
    assert_eq!(v("split_index('a/b/c', '', 0)"), "null");
    assert_eq!(compile_err("substr(1, 1)").kind, ExprErrorKind::Type);
    assert_eq!(
        compile_err("replace('a', 1, 'b')").kind,
        ExprErrorKind::Type
    );
}

#[test]
fn regular_expressions_take_a_literal_pattern_compiled_once() {
    assert_eq!(
        v(r"regexp_extract('a=1&channel_id=77&b', '(&|^)channel_id=([^&]*)', 2)"),
        r#""77""#
    );
    assert_eq!(v(r"regexp_extract('x', 'y')"), "null");
    assert_eq!(v(r"regexp_extract(name, '^(.)')"), r#""A""#);
    assert_eq!(v(r"regexp_extract(none, 'a', 1)"), "null");
    assert_eq!(v(r"regexp(name, 'd.$')"), "true");
    assert_eq!(v(r"regexp_replace('a-b-c', '-', '+')"), r#""a+b+c""#);
    assert_eq!(
        v(r"regexp_replace('2024-01', '(\\d+)-(\\d+)', '$2/$1')"),
        r#""$2/$1""#,
        "literal replacement text, as Flink's (it quotes it)"
    );
    // The pattern is checked when the expression compiles, where it is written.
    let e = compile_err("regexp(name, name)");
    assert!(
        e.message.contains("must be a string literal"),
        "{}",
        e.message
    );
    assert_eq!(e.column, 14);
    let e = compile_err("regexp_extract(name, '(a')");
    assert!(e.message.contains("pattern `(a`"), "{}", e.message);
    assert_eq!(e.column, 22, "the error points at the pattern");
    assert!(compile_err(r"regexp(name, '(a)\\1')")
        .message
        .contains("backreferences"));
    assert_eq!(
        compile_err("regexp_extract(name, 'a', 'b')").kind,
        ExprErrorKind::Type
    );
    assert_eq!(compile_err("regexp(1, 'a')").kind, ExprErrorKind::Type);
    let e = eval_err("regexp(qty, 'a')");
    assert_eq!(
        e.reason().clone(),
        EvalReason::Type {
            op: "regexp",
            expected: "a string",
            found: "int"
        }
    );
}
