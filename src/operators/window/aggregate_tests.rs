//! Tests of the window aggregate accumulators: each aggregate's arithmetic (overflow, NaN, mixed
//! int/float), JSON rendering, the layout's field writing, and a property test that merging
//! partial accumulators equals updating one sequentially.

use super::*;
use proptest::prelude::*;
use Value::{Float as F, Hash as H, Int as I, Null};

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
        let mut e = Event::EMPTY;
        e.set_value(0, v);
        self.layout.update(&mut self.words, &e, &mut self.sketches);
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
    ]
}

proptest! {
    #[test]
    fn merge_equals_sequential(vals in proptest::collection::vec(value(), 0..400), cut in 0usize..400) {
        let cut = cut.min(vals.len());
        for func in [AggFunc::Count, AggFunc::Sum, AggFunc::Min, AggFunc::Max, AggFunc::Avg, AggFunc::CountDistinct] {
            let (mut whole, mut left, mut right) = (Acc::new(func), Acc::new(func), Acc::new(func));
            vals.iter().for_each(|&v| whole.update(v));
            vals[..cut].iter().for_each(|&v| left.update(v));
            vals[cut..].iter().for_each(|&v| right.update(v));
            left.merge(&right);
            prop_assert_eq!(json(&left), json(&whole), "{:?}", func);
        }
    }
}
