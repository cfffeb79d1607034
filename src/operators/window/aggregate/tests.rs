//! Tests of the window aggregate accumulators: each aggregate's arithmetic (overflow, NaN, mixed
//! int/float/decimal), JSON rendering, the layout's field writing, exact comparisons, and property
//! tests: merging partial accumulators in any grouping equals updating one sequentially, decimal
//! results equal a reference computed with `rust_decimal`, and no input or state panics.

use super::super::numbers::{cmp_dec_float, cmp_int_float};
use super::*;
use proptest::prelude::*;
use rust_decimal::Decimal;
use std::cmp::Ordering;
use std::str::FromStr;
use Value::{Float as F, Hash as H, Int as I, Null};

/// A decimal exactly as written (`"2.50"` keeps its scale).
fn d(s: &str) -> Value {
    Value::Dec(Decimal::from_str(s).unwrap())
}

/// Feeds one value to every slot (decimals of any width, which an inline slot may not hold).
struct One(Value);

impl Values for One {
    fn value(&self, _slot: usize) -> Value {
        self.0
    }
}

/// One aggregate's state, driven through a one-aggregate layout as the window operators drive it
/// (`count()` reads no field; the others read value slot 0).
struct Acc {
    layout: AggLayout,
    words: Vec<u64>,
    sketches: Sketches,
}

impl Acc {
    fn new(func: AggFunc) -> Acc {
        let slot = (func != AggFunc::Count).then_some(0);
        let layout = AggLayout::new(&[plan("a", func, slot)]);
        let words = vec![0; layout.words()];
        Acc {
            layout,
            words,
            sketches: Sketches::default(),
        }
    }

    fn update(&mut self, v: Value) {
        self.layout
            .update(&mut self.words, &One(v), &mut self.sketches);
    }

    fn merge(&mut self, other: &Acc) {
        self.layout.merge(
            &mut self.words,
            &mut self.sketches,
            &other.words,
            &other.sketches,
        );
    }
}

fn json(acc: &Acc) -> String {
    let mut out = Vec::new();
    acc.layout.write_fields(&acc.words, &acc.sketches, &mut out);
    String::from_utf8(out)
        .unwrap()
        .strip_prefix(",\"a\":")
        .unwrap()
        .to_string()
}

fn run(func: AggFunc, vals: &[Value]) -> String {
    let mut acc = Acc::new(func);
    for &v in vals {
        acc.update(v);
    }
    json(&acc)
}

#[test]
fn count_counts_rows_including_nulls() {
    assert_eq!(run(AggFunc::Count, &[]), "0");
    assert_eq!(run(AggFunc::Count, &[Null, Null, I(3)]), "3");
}

#[test]
fn count_of_a_field_counts_its_non_null_values() {
    let layout = AggLayout::new(&[plan("a", AggFunc::Count, Some(0))]);
    let mut acc = Acc {
        words: vec![0; layout.words()],
        layout,
        sketches: Sketches::default(),
    };
    // A string arrives hashed (the slot reads any value), a number as itself.
    for v in [Null, Value::Hash(7), Null, I(3), Value::Hash(7)] {
        acc.update(v);
    }
    assert_eq!(json(&acc), "3");
}

#[test]
fn sum_of_ints_is_int_and_ignores_nulls() {
    assert_eq!(run(AggFunc::Sum, &[I(5), Null, I(-7), I(10)]), "8");
    assert_eq!(run(AggFunc::Sum, &[I(-4), I(-6)]), "-10");
    assert_eq!(run(AggFunc::Sum, &[]), "null");
    assert_eq!(run(AggFunc::Sum, &[Null, Null]), "null");
    assert_eq!(run(AggFunc::Sum, &[I(0)]), "0");
}

#[test]
fn sum_with_a_float_is_float() {
    assert_eq!(run(AggFunc::Sum, &[I(1), F(2.5)]), "3.5");
    assert_eq!(run(AggFunc::Sum, &[I(1), F(2.0)]), "3.0");
    assert_eq!(run(AggFunc::Sum, &[F(0.1), F(0.2)]), "0.30000000000000004");
    assert_eq!(run(AggFunc::Sum, &[F(-1.5)]), "-1.5");
}

#[test]
fn sum_overflowing_i64_turns_float_but_recovers_exactly() {
    // 2 * i64::MAX = 18446744073709551614, nearest f64 is 2^64.
    assert_eq!(
        run(AggFunc::Sum, &[I(i64::MAX), I(i64::MAX)]),
        "1.8446744073709552e19"
    );
    assert_eq!(
        run(AggFunc::Sum, &[I(i64::MIN), I(-1)]),
        "-9.223372036854776e18"
    );
    // A transient overflow that comes back into range stays an exact integer.
    assert_eq!(
        run(AggFunc::Sum, &[I(i64::MAX), I(10), I(-20)]),
        "9223372036854775797"
    );
    assert_eq!(run(AggFunc::Sum, &[I(i64::MIN)]), "-9223372036854775808");
}

#[test]
fn nan_and_infinity() {
    assert_eq!(run(AggFunc::Sum, &[I(1), F(f64::NAN)]), "null");
    assert_eq!(run(AggFunc::Sum, &[F(f64::INFINITY)]), "null");
    assert_eq!(run(AggFunc::Avg, &[F(f64::NAN), I(1)]), "null");
    // min/max skip NaN, keep infinities (rendered null) in the order.
    assert_eq!(
        run(AggFunc::Min, &[F(f64::NAN), I(4), F(f64::NAN), I(2)]),
        "2"
    );
    assert_eq!(run(AggFunc::Max, &[F(f64::NAN)]), "null");
    assert_eq!(run(AggFunc::Max, &[I(i64::MAX), F(f64::INFINITY)]), "null");
    assert_eq!(
        run(AggFunc::Min, &[I(i64::MIN), F(f64::INFINITY)]),
        "-9223372036854775808"
    );
    assert_eq!(
        run(AggFunc::Min, &[I(i64::MIN), F(f64::NEG_INFINITY)]),
        "null"
    );
}

#[test]
fn min_max_keep_input_kind_and_compare_mixed_numerically() {
    let vals = [I(3), F(-2.5), Null, I(-2), F(7.25), I(7)];
    assert_eq!(run(AggFunc::Min, &vals), "-2.5");
    assert_eq!(run(AggFunc::Max, &vals), "7.25");
    assert_eq!(run(AggFunc::Max, &[F(1.5), I(2)]), "2");
    assert_eq!(run(AggFunc::Min, &[F(2.0)]), "2.0");
    assert_eq!(run(AggFunc::Min, &[Null]), "null");
    // Ties: first seen wins.
    assert_eq!(run(AggFunc::Max, &[I(3), F(3.0)]), "3");
    assert_eq!(run(AggFunc::Max, &[F(3.0), I(3)]), "3.0");
    // Beyond 2^53, `i as f64` would call these equal; the exact comparison does not.
    let big = (1i64 << 53) + 1;
    assert_eq!(
        run(AggFunc::Max, &[F((1u64 << 53) as f64), I(big)]),
        big.to_string()
    );
    assert_eq!(
        run(AggFunc::Min, &[I(big), F((1u64 << 53) as f64)]),
        "9007199254740992.0"
    );
    assert_eq!(
        run(AggFunc::Max, &[I(i64::MAX), F(i64::MAX as f64)]),
        "9.223372036854776e18"
    );
    assert_eq!(run(AggFunc::Min, &[I(-1), F(-0.5)]), "-1");
    assert_eq!(run(AggFunc::Max, &[I(-1), F(-0.5)]), "-0.5");
    // Hash values are not numbers.
    assert_eq!(run(AggFunc::Max, &[H(99)]), "null");
}

#[test]
fn cmp_int_float_edges() {
    assert_eq!(cmp_int_float(0, -0.0), Ordering::Equal);
    assert_eq!(cmp_int_float(1, 0.999), Ordering::Greater);
    assert_eq!(cmp_int_float(-1, -0.999), Ordering::Less);
    assert_eq!(cmp_int_float(-1, -1.001), Ordering::Greater);
    assert_eq!(cmp_int_float(i64::MIN, -(2f64.powi(63))), Ordering::Equal);
    assert_eq!(cmp_int_float(i64::MAX, 2f64.powi(63)), Ordering::Less);
}

#[test]
fn avg_is_float() {
    assert_eq!(run(AggFunc::Avg, &[I(1), I(2)]), "1.5");
    assert_eq!(run(AggFunc::Avg, &[I(2), Null, I(2)]), "2.0");
    assert_eq!(run(AggFunc::Avg, &[I(-3), F(0.5)]), "-1.25");
    assert_eq!(
        run(AggFunc::Avg, &[I(i64::MAX), I(i64::MAX)]),
        "9.223372036854776e18"
    );
    assert_eq!(run(AggFunc::Avg, &[Null]), "null");
}

#[test]
fn count_distinct_counts_hashes() {
    assert_eq!(run(AggFunc::CountDistinct, &[]), "0");
    assert_eq!(run(AggFunc::CountDistinct, &[Null]), "0");
    assert_eq!(
        run(AggFunc::CountDistinct, &[H(1), H(2), H(1), Null, H(3)]),
        "3"
    );
    assert_eq!(run(AggFunc::CountDistinct, &[I(1), I(1), F(1.0)]), "2");
}

#[test]
fn floats_render_as_json_numbers() {
    let render = |f: f64| {
        let mut out = Vec::new();
        write_f64(&mut out, f);
        String::from_utf8(out).unwrap()
    };
    assert_eq!(render(3.0), "3.0");
    assert_eq!(render(-0.0), "-0.0");
    assert_eq!(render(1e17), "1e17");
    assert_eq!(render(1.5e-7), "1.5e-7");
    assert_eq!(render(123456789.125), "123456789.125");
    assert_eq!(render(f64::NEG_INFINITY), "null");
}

/// Aggregate `func` named `name` over value slot `slot` (`None`: `count()`).
fn plan(name: &str, func: AggFunc, slot: Option<usize>) -> AggPlan {
    AggPlan {
        name: name.into(),
        func,
        field: slot.map(|s| crate::expr::FieldPath::parse(&format!("f{s}")).unwrap()),
        slot,
    }
}

#[test]
fn layout_updates_from_slots_and_writes_fields() {
    let aggs = [
        plan("clicks", AggFunc::Count, None),
        plan("spend", AggFunc::Sum, Some(0)),
        plan("top_bid", AggFunc::Max, Some(0)),
        plan("users", AggFunc::CountDistinct, Some(1)),
        plan("bids", AggFunc::Count, Some(0)),
        plan("we\"ird\\\n", AggFunc::Min, Some(2)),
    ];
    let layout = AggLayout::new(&aggs);
    assert_eq!(layout.len(), 6);
    assert_eq!(layout.words(), 1 + 4 + 2 + 1 + 1 + 2);
    let (mut a, mut sa) = (vec![0; layout.words()], Sketches::default());
    let (b, sb) = (vec![0; layout.words()], Sketches::default());
    let mut e = Event::EMPTY;
    for (bid, user) in [(Some(100), 7), (None, 8), (Some(250), 7)] {
        e.set_value(0, bid.map_or(Null, I));
        e.set_value(1, H(user));
        layout.update(&mut a, &e, &mut sa);
    }
    let mut out = Vec::new();
    layout.write_fields(&a, &sa, &mut out);
    let expect =
        r#","clicks":3,"spend":350,"top_bid":250,"users":2,"bids":2,"we\"ird\\\u000a":null"#;
    assert_eq!(String::from_utf8(out).unwrap(), expect);
    // The empty set merged in changes nothing.
    let before = (a.clone(), sa.clone());
    layout.merge(&mut a, &mut sa, &b, &sb);
    assert_eq!((a, sa), before);
    // All zeros renders every aggregate's empty value.
    let mut out = Vec::new();
    layout.write_fields(&b, &sb, &mut out);
    let expect =
        r#","clicks":0,"spend":null,"top_bid":null,"users":0,"bids":0,"we\"ird\\\u000a":null"#;
    assert_eq!(String::from_utf8(out).unwrap(), expect);
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Null),
        any::<i64>().prop_map(I),
        (-1000i64..1000).prop_map(I),
        // Quarters of small integers: float sums are exact, so any order gives equal bits.
        (-4000i32..4000).prop_map(|q| F(f64::from(q) / 4.0)),
        Just(F(f64::NAN)),
        (0u64..40).prop_map(|h| H(h.wrapping_mul(0x9e37_79b9_7f4a_7c15))),
        // Decimals of scale 0 to 4 (equal values of different scales among them).
        (-20_000i64..20_000, 0u32..5).prop_map(|(m, s)| Value::Dec(Decimal::new(m, s))),
    ]
}

proptest! {
    #[test]
    fn merge_equals_sequential(vals in proptest::collection::vec(value(), 0..400), cut in 0usize..400) {
        let cut = cut.min(vals.len());
        for func in [AggFunc::Count, AggFunc::Sum, AggFunc::Min, AggFunc::Max, AggFunc::Avg, AggFunc::CountDistinct, AggFunc::ApproxCountDistinct] {
            let (mut whole, mut left, mut right) = (Acc::new(func), Acc::new(func), Acc::new(func));
            vals.iter().for_each(|&v| whole.update(v));
            vals[..cut].iter().for_each(|&v| left.update(v));
            vals[cut..].iter().for_each(|&v| right.update(v));
            left.merge(&right);
            prop_assert_eq!(json(&left), json(&whole), "{:?}", func);
        }
    }
}

#[test]
fn sum_of_decimals_is_exact_and_keeps_the_largest_scale() {
    assert_eq!(run(AggFunc::Sum, &[d("1.2345"), d("2.0000")]), "3.2345");
    assert_eq!(run(AggFunc::Sum, &[d("0.10"), d("0.20")]), "0.30");
    assert_eq!(
        run(AggFunc::Sum, &[d("0.1"), d("0.2")]),
        "0.3",
        "not 0.30000000000000004"
    );
    assert_eq!(
        run(AggFunc::Sum, &[d("1.1"), d("1.11"), d("1.111")]),
        "3.321"
    );
    assert_eq!(run(AggFunc::Sum, &[I(1), d("2.50")]), "3.50");
    assert_eq!(run(AggFunc::Sum, &[d("2.50"), Null, I(-3)]), "-0.50");
    assert_eq!(run(AggFunc::Sum, &[d("1.00"), d("-1.00")]), "0.00");
    assert_eq!(run(AggFunc::Sum, &[d("-0.0")]), "0.0");
    // A decimal of scale 0 (an integer too large for i64) sums exactly too.
    assert_eq!(
        run(AggFunc::Sum, &[d("12345678901234567890"), I(1)]),
        "12345678901234567891"
    );
    // Integers alone stay integers; a float makes the sum a float, decimals included.
    assert_eq!(run(AggFunc::Sum, &[I(3), I(4)]), "7");
    assert_eq!(run(AggFunc::Sum, &[d("0.5"), F(0.25)]), "0.75");
    assert_eq!(run(AggFunc::Sum, &[d("2.5"), F(1e300)]), "1e300");
    assert_eq!(run(AggFunc::Sum, &[d("2.5"), F(f64::NAN)]), "null");
    // 28 digits, the most a decimal holds, at the smallest step.
    assert_eq!(
        run(
            AggFunc::Sum,
            &[
                d("0.0000000000000000000000000001"),
                d("0.0000000000000000000000000002")
            ]
        ),
        "0.0000000000000000000000000003"
    );
}

#[test]
fn a_decimal_sum_beyond_28_digits_renders_the_float_sum() {
    let max = d("79228162514264337593543950335");
    // Twice the largest decimal: exact in the accumulator, more than a decimal holds.
    assert_eq!(run(AggFunc::Sum, &[max, max]), "1.5845632502852868e29");
    // Past it and back: the exact total is what renders.
    assert_eq!(
        run(
            AggFunc::Sum,
            &[max, max, d("-79228162514264337593543950335")]
        ),
        "79228162514264337593543950335"
    );
    // 39 digits at scale 28: fits the accumulator, not a decimal.
    let tiny = d("0.0000000000000000000000000001");
    assert_eq!(
        run(AggFunc::Sum, &[tiny, I(10_000_000_000)]),
        "10000000000.0"
    );
    // Beyond the accumulator itself (i64::MAX at scale 28): the float sum from then on.
    assert_eq!(
        run(AggFunc::Sum, &[tiny, I(i64::MAX), d("1.5"), I(7)]),
        "9.223372036854776e18"
    );
    assert_eq!(
        run(AggFunc::Avg, &[tiny, I(i64::MAX), I(i64::MAX)]),
        "6.148914691236517e18"
    );
    // Merging an exact partial into one that left exact arithmetic (and the other way round).
    let (mut a, mut b) = (Acc::new(AggFunc::Sum), Acc::new(AggFunc::Sum));
    for v in [tiny, I(i64::MAX)] {
        a.update(v);
    }
    b.update(d("1.25"));
    let mut b2 = Acc::new(AggFunc::Sum);
    b2.update(d("1.25"));
    a.merge(&b);
    b2.merge(&{
        let mut x = Acc::new(AggFunc::Sum);
        x.update(tiny);
        x.update(I(i64::MAX));
        x
    });
    assert_eq!(json(&a), "9.223372036854776e18");
    assert_eq!(json(&b2), json(&a));
}

#[test]
fn avg_over_decimals_is_an_exact_decimal_division() {
    assert_eq!(run(AggFunc::Avg, &[d("1.00"), d("2.00")]), "1.5");
    assert_eq!(run(AggFunc::Avg, &[I(1), d("2.0")]), "1.5");
    assert_eq!(
        run(AggFunc::Avg, &[d("2.00"), Null, d("2.00")]),
        "2",
        "trailing zeros dropped"
    );
    assert_eq!(run(AggFunc::Avg, &[d("-0.5"), d("0.5")]), "0");
    // Rounded where a decimal's 96-bit mantissa ends (28 or 29 significant digits), as `/` of
    // decimals in expressions rounds.
    assert_eq!(
        run(AggFunc::Avg, &[d("0.1"), d("0.2"), d("0.4")]),
        "0.2333333333333333333333333333"
    );
    assert_eq!(
        run(AggFunc::Avg, &[d("10"), d("0"), d("0")]),
        "3.3333333333333333333333333333"
    );
    assert_eq!(
        run(AggFunc::Avg, &[d("2"), d("0"), d("0")]),
        "0.6666666666666666666666666667"
    );
    // The expression language's `/`, evaluated.
    let expr = |text: &str| {
        let p = crate::expr::compile(text).unwrap();
        let mut out = Vec::new();
        p.eval(&()).unwrap().write_json(&mut out);
        String::from_utf8(out).unwrap()
    };
    for (vals, text) in [
        (&[d("10"), d("0.0"), d("0")][..], "10.0 / 3"),
        (&[d("1.00"), d("2.00")], "3.00 / 2"),
        (&[d("0.1"), d("0.2"), d("0.4")], "0.7 / 3"),
        (&[d("-1.2345"), I(7), d("0.0001")], "5.7656 / 3"),
        (&[d("4.00"), d("4.00"), d("4.00")], "12.00 / 3"),
    ] {
        assert_eq!(run(AggFunc::Avg, vals), expr(text), "{text}");
    }
    // A float among them, or integers alone: a float, as before.
    assert_eq!(run(AggFunc::Avg, &[d("1.5"), F(0.5)]), "1.0");
    assert_eq!(run(AggFunc::Avg, &[I(1), I(2)]), "1.5");
    assert_eq!(run(AggFunc::Avg, &[I(2), I(2)]), "2.0");
}

#[test]
fn min_max_over_decimals_compare_exactly_and_keep_the_input_as_written() {
    let vals = [d("2.50"), I(3), d("2.5"), F(2.75), d("-0.010"), I(-1)];
    assert_eq!(run(AggFunc::Max, &vals), "3");
    assert_eq!(run(AggFunc::Min, &vals), "-1");
    assert_eq!(
        run(AggFunc::Min, &[d("2.50"), d("2.5")]),
        "2.50",
        "ties keep the first"
    );
    assert_eq!(run(AggFunc::Max, &[d("2.5"), d("2.50")]), "2.5");
    assert_eq!(run(AggFunc::Max, &[d("2.0"), I(2)]), "2.0");
    assert_eq!(run(AggFunc::Max, &[I(2), d("2.0")]), "2");
    assert_eq!(run(AggFunc::Min, &[d("-0.010"), d("-0.01")]), "-0.010");
    // 0.1 as a float is 0.1000000000000000055...: above the decimal 0.10.
    assert_eq!(run(AggFunc::Max, &[d("0.10"), F(0.1)]), "0.1");
    assert_eq!(run(AggFunc::Min, &[F(0.1), d("0.10")]), "0.10");
    // Beyond 2^53, where `as f64` would call them equal.
    assert_eq!(
        run(
            AggFunc::Max,
            &[I(9_007_199_254_740_992), d("9007199254740993")]
        ),
        "9007199254740993"
    );
    assert_eq!(
        run(
            AggFunc::Min,
            &[F(9_007_199_254_740_992.0), d("9007199254740992.5")]
        ),
        "9007199254740992.0"
    );
    let max = d("79228162514264337593543950335");
    assert_eq!(run(AggFunc::Max, &[max, F(1e30)]), "1e30");
    assert_eq!(
        run(AggFunc::Min, &[max, F(1e30)]),
        "79228162514264337593543950335"
    );
    assert_eq!(
        run(
            AggFunc::Min,
            &[d("-0.0000000000000000000000000001"), F(-1e-300)]
        ),
        "-0.0000000000000000000000000001"
    );
    assert_eq!(
        run(
            AggFunc::Max,
            &[d("0.0000000000000000000000000001"), F(5e-324)]
        ),
        "0.0000000000000000000000000001"
    );
}

#[test]
fn cmp_dec_float_edges() {
    let dec = |s: &str| Decimal::from_str(s).unwrap();
    assert_eq!(cmp_dec_float(dec("0"), -0.0), Ordering::Equal);
    assert_eq!(cmp_dec_float(dec("-0.5"), -0.5), Ordering::Equal);
    assert_eq!(cmp_dec_float(dec("0.5000"), 0.5), Ordering::Equal);
    assert_eq!(cmp_dec_float(dec("-0.5"), -0.4), Ordering::Less);
    assert_eq!(cmp_dec_float(dec("-0.5"), 0.4), Ordering::Less);
    assert_eq!(cmp_dec_float(dec("0.1"), 0.1), Ordering::Less);
    assert_eq!(cmp_dec_float(dec("-0.1"), -0.1), Ordering::Greater);
    assert_eq!(
        cmp_dec_float(dec("0.1000000000000000055511151232"), 0.1),
        Ordering::Greater
    );
    assert_eq!(
        cmp_dec_float(dec("0.1000000000000000055511151231"), 0.1),
        Ordering::Less
    );
    assert_eq!(
        cmp_dec_float(dec("3"), 2.9999999999999996),
        Ordering::Greater
    );
    assert_eq!(
        cmp_dec_float(dec("79228162514264337593543950335"), 7.922816251426434e28),
        Ordering::Less
    );
    assert_eq!(cmp_dec_float(dec("1"), f64::INFINITY), Ordering::Less);
    assert_eq!(
        cmp_dec_float(dec("1"), f64::NEG_INFINITY),
        Ordering::Greater
    );
    assert_eq!(
        cmp_dec_float(dec("0.0000000000000000000000000001"), 5e-324),
        Ordering::Greater
    );
    assert_eq!(cmp_dec_float(dec("0"), 5e-324), Ordering::Less);
    assert_eq!(cmp_dec_float(dec("-7.25"), -7.25), Ordering::Equal);
}

/// The exact decimal expansion of a finite float (every f64 has one, at most 1074 fraction
/// digits) and of a decimal, compared as digit strings: a reference for `cmp_dec_float`.
fn cmp_by_text(x: Decimal, f: f64) -> Ordering {
    fn parts(s: &str) -> (bool, String, String) {
        let (neg, s) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (i, fr) = s.split_once('.').unwrap_or((s, ""));
        let i = i.trim_start_matches('0').to_string();
        let fr = fr.trim_end_matches('0').to_string();
        let zero = i.is_empty() && fr.is_empty();
        (neg && !zero, i, fr)
    }
    let (xn, xi, xf) = parts(&x.to_string());
    let (fneg, fi, ff) = parts(&format!("{f:.1100}"));
    let mag = xi
        .len()
        .cmp(&fi.len())
        .then_with(|| xi.cmp(&fi))
        .then_with(|| {
            let w = xf.len().max(ff.len());
            format!("{xf:0<w$}").cmp(&format!("{ff:0<w$}"))
        });
    match (xn, fneg) {
        (false, false) => mag,
        (true, true) => mag.reverse(),
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
    }
}

fn any_decimal() -> impl Strategy<Value = Decimal> {
    (any::<i64>(), any::<u32>(), 0u32..=28, any::<bool>()).prop_map(|(lo, hi, scale, neg)| {
        let m = (i128::from(hi) << 64 | i128::from(lo as u64)) & ((1 << 96) - 1);
        let m = if neg { -m } else { m };
        Decimal::try_from_i128_with_scale(m, scale).unwrap()
    })
}

fn any_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Null),
        any::<i64>().prop_map(I),
        any::<f64>().prop_map(F),
        Just(F(f64::INFINITY)),
        any_decimal().prop_map(Value::Dec),
        Just(d("79228162514264337593543950335")),
        Just(d("-79228162514264337593543950335")),
        any::<u64>().prop_map(H),
    ]
}

/// 4-decimal prices (a few of smaller scale), integers small and large, and nulls.
fn price_or_int() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (-10_000_000_000i64..10_000_000_000).prop_map(|m| Value::Dec(Decimal::new(m, 4))),
        1 => (-1_000_000i64..1_000_000, 0u32..4).prop_map(|(m, s)| Value::Dec(Decimal::new(m, s))),
        2 => (-1000i64..1000).prop_map(I),
        1 => (-1_000_000_000_000_000i64..1_000_000_000_000_000).prop_map(I),
        1 => Just(Null),
    ]
}

/// The reference: each aggregate's text computed with `rust_decimal` alone.
fn reference(func: AggFunc, vals: &[Value]) -> String {
    let nums: Vec<Value> = vals.iter().copied().filter(|v| *v != Null).collect();
    let as_dec = |v: &Value| match v {
        I(i) => Decimal::from(*i),
        Value::Dec(x) => *x,
        _ => unreachable!("numbers only"),
    };
    let text = |v: &Value| match v {
        I(i) => i.to_string(),
        Value::Dec(x) => x.to_string(),
        _ => unreachable!(),
    };
    let any_dec = nums.iter().any(|v| matches!(v, Value::Dec(_)));
    let total = nums.iter().map(as_dec).fold(Decimal::ZERO, |a, b| a + b);
    match func {
        // `count()` counts rows, nulls included.
        AggFunc::Count => vals.len().to_string(),
        _ if nums.is_empty() => "null".into(),
        AggFunc::Sum if any_dec => {
            let scale = nums.iter().map(|v| as_dec(v).scale()).max().unwrap_or(0);
            let mut t = total;
            t.rescale(scale);
            t.to_string()
        }
        AggFunc::Sum => total.to_string(),
        AggFunc::Avg if any_dec => (total / Decimal::from(nums.len() as u64))
            .normalize()
            .to_string(),
        AggFunc::Avg => format!(
            "{:?}",
            total.to_string().parse::<f64>().unwrap() / nums.len() as f64
        ),
        AggFunc::Min | AggFunc::Max => {
            let mut best = nums[0];
            for v in &nums[1..] {
                let o = as_dec(v).cmp(&as_dec(&best));
                if (func == AggFunc::Max && o == Ordering::Greater)
                    || (func == AggFunc::Min && o == Ordering::Less)
                {
                    best = *v;
                }
            }
            text(&best)
        }
        AggFunc::CountDistinct | AggFunc::ApproxCountDistinct => unreachable!(),
    }
}

/// Folds `vals` in contiguous groups cut at `cuts`, then merges neighbouring groups in the order
/// `picks` says (any bracketing, order kept: ties of min/max keep the first seen).
fn grouped(func: AggFunc, vals: &[Value], cuts: &[usize], picks: &[usize]) -> String {
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (vals.len() + 1)).collect();
    bounds.extend([0, vals.len()]);
    bounds.sort_unstable();
    let mut accs: Vec<Acc> = bounds
        .windows(2)
        .map(|w| {
            let mut a = Acc::new(func);
            vals[w[0]..w[1]].iter().for_each(|&v| a.update(v));
            a
        })
        .collect();
    let mut p = picks.iter().cycle();
    while accs.len() > 1 {
        let i = p.next().map_or(0, |&i| i % (accs.len() - 1));
        let right = accs.remove(i + 1);
        accs[i].merge(&right);
    }
    json(&accs[0])
}

proptest! {
    #[test]
    fn merge_in_any_grouping_equals_one_pass_and_the_decimal_reference(
        vals in proptest::collection::vec(price_or_int(), 0..300),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        picks in proptest::collection::vec(any::<usize>(), 1..12),
    ) {
        for func in [AggFunc::Count, AggFunc::Sum, AggFunc::Avg, AggFunc::Min, AggFunc::Max] {
            let one_pass = run(func, &vals);
            prop_assert_eq!(&one_pass, &reference(func, &vals), "{:?}", func);
            prop_assert_eq!(grouped(func, &vals, &cuts, &picks), one_pass, "{:?}", func);
        }
        // Sums and counts do not depend on the order either.
        let mut rev = vals.clone();
        rev.reverse();
        for func in [AggFunc::Count, AggFunc::Sum, AggFunc::Avg] {
            prop_assert_eq!(run(func, &rev), run(func, &vals), "{:?}", func);
        }
    }

    #[test]
    fn merge_in_any_grouping_equals_one_pass(
        vals in proptest::collection::vec(value(), 0..300),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
        picks in proptest::collection::vec(any::<usize>(), 1..12),
    ) {
        for func in [AggFunc::Count, AggFunc::Sum, AggFunc::Min, AggFunc::Max, AggFunc::Avg, AggFunc::CountDistinct, AggFunc::ApproxCountDistinct] {
            prop_assert_eq!(grouped(func, &vals, &cuts, &picks), run(func, &vals), "{:?}", func);
        }
    }

    /// No input, and no state words (a damaged snapshot), make an aggregate panic.
    #[test]
    fn nothing_panics(
        vals in proptest::collection::vec(any_value(), 0..60),
        cuts in proptest::collection::vec(any::<usize>(), 0..6),
        picks in proptest::collection::vec(any::<usize>(), 1..6),
        junk in proptest::collection::vec(any::<u64>(), 4),
    ) {
        for func in [AggFunc::Count, AggFunc::Sum, AggFunc::Min, AggFunc::Max, AggFunc::Avg, AggFunc::CountDistinct, AggFunc::ApproxCountDistinct] {
            let _ = grouped(func, &vals, &cuts, &picks);
            let mut a = Acc::new(func);
            let n = a.words.len();
            a.words.copy_from_slice(&junk[..n]);
            let _ = json(&a);
            let b = Acc::new(func);
            let mut c = Acc::new(func);
            c.merge(&a);
            a.merge(&b);
            for &v in &vals {
                a.update(v);
            }
            let _ = (json(&a), json(&c));
        }
    }

    #[test]
    fn cmp_dec_float_is_exact(x in any_decimal(), f in any::<f64>(), near in any::<bool>(), ulps in -3i64..3) {
        // Mostly floats right next to the decimal, where rounding would decide.
        let f = if near {
            let g = rust_decimal::prelude::ToPrimitive::to_f64(&x).unwrap();
            f64::from_bits((g.to_bits() as i64 + ulps) as u64)
        } else {
            f
        };
        prop_assume!(f.is_finite());
        prop_assert_eq!(cmp_dec_float(x, f), cmp_by_text(x, f), "{} vs {:e}", x, f);
    }
}

/// Past 256 values `count_distinct` stays exact in any grouping of merges, while
/// `approx_count_distinct` estimates (within 5% here, 3 sigma of its ~1.6% error).
#[test]
fn count_distinct_is_exact_past_the_small_set_and_approx_estimates() {
    let vals: Vec<Value> = (0..5_000u64)
        .chain(0..5_000u64)
        .map(|i| H(crate::record::event::hash_key(&i.to_le_bytes())))
        .collect();
    for (cuts, picks) in [
        (vec![], vec![0]),
        (vec![17, 300, 4_000, 9_000], vec![3, 1, 2, 0]),
    ] {
        assert_eq!(
            grouped(AggFunc::CountDistinct, &vals, &cuts, &picks),
            "5000"
        );
        let approx: i64 = grouped(AggFunc::ApproxCountDistinct, &vals, &cuts, &picks)
            .parse()
            .unwrap();
        assert!((approx - 5_000).abs() <= 250, "approx {approx}");
    }
    assert_eq!(run(AggFunc::CountDistinct, &vals[..257]), "257");
}

#[test]
fn count_distinct_of_decimals_counts_equal_values_once() {
    assert_eq!(
        run(
            AggFunc::CountDistinct,
            &[
                d("2.5"),
                d("2.50"),
                I(2),
                d("2.0"),
                d("-2.5"),
                d("0.00"),
                I(0)
            ]
        ),
        "4"
    );
    // As the record binding hashes the tokens `2.50` and `2`.
    assert_eq!(
        run(
            AggFunc::CountDistinct,
            &[
                d("2.50"),
                H(crate::record::event::hash_key(b"2.5")),
                H(crate::record::event::hash_key(b"2")),
                I(2)
            ]
        ),
        "2"
    );
}

/// A retracted value: taken back out of `count`, `sum` and `avg`.
struct Back(Value);

impl Values for Back {
    fn value(&self, _slot: usize) -> Value {
        self.0
    }
    fn retracts(&self) -> bool {
        true
    }
}

proptest! {
    /// Retracting some of the values (each after or before its record, in any partial) leaves
    /// exactly the aggregate of the others, in any grouping.
    #[test]
    fn retractions_take_values_back_exactly(
        vals in proptest::collection::vec(price_or_int(), 0..120),
        back in proptest::collection::vec(any::<bool>(), 120),
        order in proptest::collection::vec(any::<u32>(), 240),
        cut in any::<usize>(),
    ) {
        // Every value once, and the retracted ones once more as retractions, in a random order.
        let mut feed: Vec<(Value, bool)> = vals.iter().map(|&v| (v, false)).collect();
        feed.extend(vals.iter().zip(&back).filter(|(_, &b)| b).map(|(&v, _)| (v, true)));
        let mut keyed: Vec<(u32, (Value, bool))> = order.iter().copied().zip(feed).collect();
        keyed.sort_by_key(|k| k.0);
        let kept: Vec<Value> = vals.iter().zip(&back).filter(|(_, &b)| !b).map(|(&v, _)| v).collect();
        let cut = cut % (keyed.len() + 1);
        let number = |t: &str| -> f64 {
            Decimal::from_str(t).map_or_else(|_| t.parse().unwrap(), |d| {
                rust_decimal::prelude::ToPrimitive::to_f64(&d).unwrap()
            })
        };
        for func in [AggFunc::Count, AggFunc::Sum, AggFunc::Avg] {
            let feed = |acc: &mut Acc, (v, b): (Value, bool)| {
                if b {
                    acc.layout.update(&mut acc.words, &Back(v), &mut acc.sketches);
                } else {
                    acc.update(v);
                }
            };
            let (mut left, mut right, mut whole) = (Acc::new(func), Acc::new(func), Acc::new(func));
            for (i, (_, e)) in keyed.iter().enumerate() {
                feed(if i < cut { &mut left } else { &mut right }, *e);
                feed(&mut whole, *e);
            }
            left.merge(&right);
            prop_assert_eq!(json(&left), json(&whole), "{:?}", func);
            let (got, want) = (json(&whole), run(func, &kept));
            // Once a decimal came in, the result stays a decimal (of the largest scale seen)
            // even if that decimal was taken back: the value is what must match.
            match func {
                AggFunc::Count => prop_assert_eq!(got, want),
                _ if want == "null" => prop_assert_eq!(got, want),
                AggFunc::Sum => prop_assert_eq!(
                    Decimal::from_str(&got).unwrap(),
                    Decimal::from_str(&want).unwrap(),
                    "{} vs {}", got, want
                ),
                _ => {
                    let (g, w) = (number(&got), number(&want));
                    prop_assert!((g - w).abs() <= 1e-9 * w.abs().max(1.0), "{} vs {}", got, want);
                }
            }
        }
    }
}
