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
#[path = "aggregate_tests.rs"]
mod tests;
