//! Window aggregate accumulators: one running state per (key, window, aggregate), updated per event.
//!
//! Owns the arithmetic and JSON rendering of `count`, `sum`, `min`, `max`, `avg` and
//! `count_distinct`. It never buffers events and never allocates on update, except
//! `count_distinct`, whose sketch ([`super::distinct`]) grows to at most 4 KiB.
//!
//! Semantics (SQL-like; every accumulator merges associatively, so panes and session merges give
//! the same result as feeding the events one by one):
//! - `count()` counts rows; `count(field)` counts non-null values of `field`.
//! - Every other aggregate ignores `Null` (absent field or JSON `null`); one that saw only nulls
//!   renders `null`, except `count_distinct`, which renders `0`.
//! - `sum` adds integers exactly in 128 bits and renders an integer if every input was an integer
//!   and the total fits in `i64`; a total outside `i64` (overflow) or any float input renders a
//!   float. `avg` is always a float (sum / count).
//! - `min`/`max` render the winning input as given (an integer stays an integer); integers and
//!   floats compare numerically and exactly; NaN inputs are ignored; on ties the first seen wins.
//! - Floats render as the shortest string that round-trips, always a JSON number distinguishable
//!   from an integer (`3.0`, `1e17`); NaN and ±infinity (which JSON cannot hold) render `null`.
//! - `count_distinct` takes `Value::Hash`; see [`super::distinct`] for its error bound.

use std::cmp::Ordering;

use super::distinct::Distinct;
use crate::event::{Event, Value, MAX_VALUE_SLOTS};
use crate::plan::{AggFunc, AggPlan};
use crate::text::{write_i64, write_u64};

/// A number as `min`/`max` keep it: the input exactly as given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    /// Numeric order; neither side is NaN (NaN never enters a `Num`).
    #[inline]
    fn less_than(self, other: Num) -> bool {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a < b,
            (Num::Float(a), Num::Float(b)) => a < b,
            (Num::Int(a), Num::Float(b)) => cmp_int_float(a, b) == Ordering::Less,
            (Num::Float(a), Num::Int(b)) => cmp_int_float(b, a) == Ordering::Greater,
        }
    }
}

/// Exact comparison of an integer with a non-NaN float (`i as f64` would round above 2^53).
fn cmp_int_float(i: i64, f: f64) -> Ordering {
    // 2^63 is exact in f64; every f64 in [-2^63, 2^63) has an integral part that fits in i64.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f >= TWO_63 {
        return Ordering::Less;
    }
    if f < -TWO_63 {
        return Ordering::Greater;
    }
    let t = f.trunc();
    match i.cmp(&(t as i64)) {
        Ordering::Equal => 0.0.partial_cmp(&(f - t)).unwrap_or(Ordering::Equal),
        other => other,
    }
}

/// Running sum shared by `sum` and `avg`: integers exact in 128 bits (order-independent, cannot
/// overflow below 2^64 inputs), floats in a separate f64.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SumState {
    /// Low and high halves of the integer total; kept as two words so `Acc` stays 8-byte aligned.
    lo: u64,
    hi: i64,
    float: f64,
    /// Non-null inputs seen.
    n: u64,
    has_float: bool,
}

impl SumState {
    #[inline]
    fn int(&self) -> i128 {
        (i128::from(self.hi) << 64) | i128::from(self.lo)
    }

    #[inline(always)]
    fn add_int(&mut self, v: i128) {
        let s = self.int().wrapping_add(v);
        self.lo = s as u64;
        self.hi = (s >> 64) as i64;
    }

    #[inline(always)]
    fn update(&mut self, v: Value) {
        match v {
            Value::Int(i) => self.add_int(i128::from(i)),
            Value::Float(f) => {
                self.float += f;
                self.has_float = true;
            }
            Value::Null | Value::Hash(_) => return,
        }
        self.n += 1;
    }

    fn merge(&mut self, other: &SumState) {
        self.add_int(other.int());
        self.float += other.float;
        self.n += other.n;
        self.has_float |= other.has_float;
    }

    fn total_f64(&self) -> f64 {
        self.int() as f64 + self.float
    }
}

/// One aggregate's running state. Cheap to copy except `Distinct`, which owns a sketch.
#[derive(Debug, Clone, PartialEq)]
pub enum Acc {
    Count(u64),
    Sum(SumState),
    Min(Option<Num>),
    Max(Option<Num>),
    Avg(SumState),
    Distinct(Distinct),
}

impl Acc {
    pub fn new(func: AggFunc) -> Acc {
        match func {
            AggFunc::Count => Acc::Count(0),
            AggFunc::Sum => Acc::Sum(SumState::default()),
            AggFunc::Min => Acc::Min(None),
            AggFunc::Max => Acc::Max(None),
            AggFunc::Avg => Acc::Avg(SumState::default()),
            AggFunc::CountDistinct => Acc::Distinct(Distinct::new()),
        }
    }

    /// Adds one value. `Count` counts every call (rows); the others ignore `Null`. `Distinct`
    /// takes `Hash`; a bare `Int`/`Float` is mixed into a hash of its bits so it still counts.
    #[inline(always)]
    pub fn update(&mut self, v: Value) {
        match self {
            Acc::Count(c) => *c += 1,
            Acc::Sum(s) | Acc::Avg(s) => s.update(v),
            Acc::Min(m) => {
                if let Some(x) = to_num(v) {
                    if m.is_none_or(|cur| x.less_than(cur)) {
                        *m = Some(x);
                    }
                }
            }
            Acc::Max(m) => {
                if let Some(x) = to_num(v) {
                    if m.is_none_or(|cur| cur.less_than(x)) {
                        *m = Some(x);
                    }
                }
            }
            Acc::Distinct(d) => match v {
                Value::Hash(h) => d.insert(h),
                Value::Int(i) => d.insert(mix64(i as u64)),
                Value::Float(f) => d.insert(mix64(f.to_bits())),
                Value::Null => {}
            },
        }
    }

    /// Merges `other` (the state of later events) into `self`. Accumulators of different
    /// functions are a caller bug: the merge is skipped (and asserted in debug builds).
    pub fn merge(&mut self, other: &Acc) {
        match (self, other) {
            (Acc::Count(a), Acc::Count(b)) => *a += b,
            (Acc::Sum(a), Acc::Sum(b)) | (Acc::Avg(a), Acc::Avg(b)) => a.merge(b),
            (a @ Acc::Min(_), Acc::Min(Some(b))) | (a @ Acc::Max(_), Acc::Max(Some(b))) => {
                a.update(from_num(*b))
            }
            (Acc::Min(_), Acc::Min(None)) | (Acc::Max(_), Acc::Max(None)) => {}
            (Acc::Distinct(a), Acc::Distinct(b)) => a.merge(b),
            (a, b) => debug_assert!(false, "merging different aggregates: {a:?} <- {b:?}"),
        }
    }

    /// Appends the result as a JSON value (no key). See the module doc for the rules.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Acc::Count(c) => write_u64(*c, out),
            Acc::Distinct(d) => write_u64(d.estimate(), out),
            Acc::Sum(s) if s.n == 0 => out.extend_from_slice(b"null"),
            Acc::Sum(s) => match i64::try_from(s.int()) {
                Ok(i) if !s.has_float => write_i64(i, out),
                _ => write_f64(out, s.total_f64()),
            },
            Acc::Avg(s) if s.n == 0 => out.extend_from_slice(b"null"),
            Acc::Avg(s) => write_f64(out, s.total_f64() / s.n as f64),
            Acc::Min(m) | Acc::Max(m) => match m {
                None => out.extend_from_slice(b"null"),
                Some(Num::Int(i)) => write_i64(*i, out),
                Some(Num::Float(f)) => write_f64(out, *f),
            },
        }
    }
}

#[inline]
fn to_num(v: Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::Int(i)),
        Value::Float(f) if !f.is_nan() => Some(Num::Float(f)),
        _ => None,
    }
}

fn from_num(n: Num) -> Value {
    match n {
        Num::Int(i) => Value::Int(i),
        Num::Float(f) => Value::Float(f),
    }
}

/// splitmix64 finaliser, for numbers that reach `count_distinct` unhashed.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Shortest round-trip form; integral values keep a `.0` (or an exponent) so they read as floats.
fn write_f64(out: &mut Vec<u8>, f: f64) {
    use std::io::Write;
    if !f.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    let start = out.len();
    // Writing to a Vec cannot fail. `{:?}` is the shortest round-trip repr with `.0`/exponent.
    let _ = write!(out, "{f:?}");
    // Guard against a future `Debug` format that drops the marker: JSON consumers must see a float.
    if !out[start..]
        .iter()
        .any(|&b| matches!(b, b'.' | b'e' | b'E'))
    {
        out.extend_from_slice(b".0");
    }
}

/// Appends `s` as a JSON string literal.
fn write_json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for &b in s.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0..=0x1f => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 15)]);
            }
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

#[derive(Debug, Clone)]
struct Spec {
    func: AggFunc,
    /// Value slot read; `None` for `count()`.
    slot: Option<usize>,
    /// `,"name":` pre-rendered.
    prefix: Box<[u8]>,
}

/// The accumulators of a window's aggregate list, in plan order. A key-window's set lives in a
/// shared arena (`Vec<Acc>`) at `base..base + len()`, so state holds one index, not a `Vec` each.
#[derive(Debug, Clone)]
pub struct AggLayout {
    specs: Vec<Spec>,
}

impl AggLayout {
    /// `slots[i]` is the event value slot aggregate `i` reads (`None` for `count()`).
    ///
    /// # Panics
    /// If `slots` is not as long as `aggs` or names a slot past [`MAX_VALUE_SLOTS`]: the plan
    /// builder guarantees both, so either is a bug, not bad input.
    pub fn new(aggs: &[AggPlan], slots: &[Option<usize>]) -> AggLayout {
        assert_eq!(aggs.len(), slots.len(), "one value slot per aggregate");
        let specs = aggs
            .iter()
            .zip(slots)
            .map(|(a, &slot)| {
                assert!(
                    slot.is_none_or(|s| s < MAX_VALUE_SLOTS),
                    "slot {slot:?} out of range"
                );
                let mut prefix = vec![b','];
                write_json_str(&mut prefix, &a.name);
                prefix.push(b':');
                Spec {
                    func: a.func,
                    slot,
                    prefix: prefix.into_boxed_slice(),
                }
            })
            .collect();
        AggLayout { specs }
    }

    pub fn len(&self) -> usize {
        self.specs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Pushes a fresh accumulator set onto `arena` and returns its start index.
    ///
    /// # Panics
    /// If the arena would pass `u32::MAX` entries (hundreds of GiB of state).
    pub fn alloc(&self, arena: &mut Vec<Acc>) -> u32 {
        let base = arena.len();
        assert!(
            base + self.specs.len() <= u32::MAX as usize,
            "aggregate arena exceeds u32 indices"
        );
        arena.extend(self.specs.iter().map(|s| Acc::new(s.func)));
        base as u32
    }

    /// Resets a set in place to its empty state, so a freed arena slot can be reused.
    pub fn reset(&self, accs: &mut [Acc]) {
        for (acc, spec) in accs.iter_mut().zip(&self.specs) {
            *acc = Acc::new(spec.func);
        }
    }

    /// Updates the set `accs` (exactly `len()` long) from one event's value slots.
    #[inline(always)]
    pub fn update(&self, accs: &mut [Acc], event: &Event) {
        for (acc, spec) in accs.iter_mut().zip(&self.specs) {
            match spec.slot {
                // count(field) and every other aggregate skip nulls here; count() counts rows.
                Some(s) => match event.value(s) {
                    Value::Null => {}
                    v => acc.update(v),
                },
                None => acc.update(Value::Null),
            }
        }
    }

    /// Merges the set `from` (later events or another pane) into `into`.
    pub fn merge(&self, into: &mut [Acc], from: &[Acc]) {
        debug_assert_eq!(into.len(), from.len());
        for (a, b) in into.iter_mut().zip(from) {
            a.merge(b);
        }
    }

    /// Appends `,"name":value` for every aggregate, in plan order.
    pub fn write_fields(&self, accs: &[Acc], out: &mut Vec<u8>) {
        for (acc, spec) in accs.iter().zip(&self.specs) {
            out.extend_from_slice(&spec.prefix);
            acc.write_json(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use Value::{Float as F, Hash as H, Int as I, Null};

    fn json(acc: &Acc) -> String {
        let mut out = Vec::new();
        acc.write_json(&mut out);
        String::from_utf8(out).unwrap()
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

    fn plan(name: &str, func: AggFunc) -> AggPlan {
        AggPlan {
            name: name.into(),
            func,
            field: None,
        }
    }

    #[test]
    fn layout_updates_from_slots_and_writes_fields() {
        let aggs = [
            plan("clicks", AggFunc::Count),
            plan("spend", AggFunc::Sum),
            plan("top_bid", AggFunc::Max),
            plan("users", AggFunc::CountDistinct),
            plan("bids", AggFunc::Count),
            plan("we\"ird\\\n", AggFunc::Min),
        ];
        let slots = [None, Some(0), Some(0), Some(1), Some(0), Some(2)];
        let layout = AggLayout::new(&aggs, &slots);
        assert_eq!(layout.len(), 6);
        let mut arena = Vec::new();
        let a = layout.alloc(&mut arena) as usize;
        let b = layout.alloc(&mut arena) as usize;
        assert_eq!((a, b, arena.len()), (0, 6, 12));
        let mut e = Event::EMPTY;
        for (bid, user) in [(Some(100), 7), (None, 8), (Some(250), 7)] {
            e.set_value(0, bid.map_or(Null, I));
            e.set_value(1, H(user));
            layout.update(&mut arena[a..a + 6], &e);
        }
        let mut out = Vec::new();
        layout.write_fields(&arena[a..a + 6], &mut out);
        let expect =
            r#","clicks":3,"spend":350,"top_bid":250,"users":2,"bids":2,"we\"ird\\\u000a":null"#;
        assert_eq!(String::from_utf8(out).unwrap(), expect);
        // The second set is untouched; merging it in changes nothing; reset empties the first.
        let (first, second) = arena.split_at_mut(b);
        let before = first.to_vec();
        layout.merge(first, second);
        assert_eq!(first, &before[..]);
        layout.reset(first);
        assert_eq!(first, second);
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
}
