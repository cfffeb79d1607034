//! Window aggregate accumulators: one running state per (key, window, aggregate), updated per event.
//!
//! Owns the arithmetic and JSON rendering of `count`, `sum`, `min`, `max`, `avg` and
//! `count_distinct`, and how their states are laid out. A key's states are plain words (`u64`),
//! laid out by an [`AggLayout`] in a row of the state table, so one key's whole state sits next to
//! its key in one or two cache lines; all zeros is every aggregate's empty state. It never buffers
//! events and never allocates on update, except `count_distinct`, whose sketch ([`super::distinct`])
//! lives beside the rows in a [`Sketches`] arena and grows to at most 4 KiB.
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
//!
//! Words per aggregate: `count` 1 (the count); `sum`/`avg` 4 (128-bit integer total as low and high
//! word, float total, non-null inputs with bit 63 set once a float was seen); `min`/`max` 2 (kind:
//! 0 none, 1 integer, 2 float; the value's bits); `count_distinct` 1 (0: no sketch yet, else the
//! sketch's index in the arena plus one).

use std::cmp::Ordering;

use super::distinct::Distinct;
use crate::checkpoint::codec::{Dec, Enc};
use crate::event::{Event, Rec, Value};
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

/// Bit 63 of a sum's input count: some input was a float.
const HAS_FLOAT: u64 = 1 << 63;

/// Running sum shared by `sum` and `avg`, over its 4 words: integers exact in 128 bits
/// (order-independent, cannot overflow below 2^64 inputs), floats in a separate f64.
mod sum {
    use super::{Value, HAS_FLOAT};

    pub const WORDS: usize = 4;

    #[inline(always)]
    fn int(w: &[u64]) -> i128 {
        (i128::from(w[1] as i64) << 64) | i128::from(w[0])
    }

    #[inline(always)]
    fn add_int(w: &mut [u64], v: i128) {
        let s = int(w).wrapping_add(v);
        w[0] = s as u64;
        w[1] = (s >> 64) as u64;
    }

    #[inline(always)]
    fn add_float(w: &mut [u64], f: f64) {
        w[2] = (f64::from_bits(w[2]) + f).to_bits();
        w[3] |= HAS_FLOAT;
    }

    #[inline(always)]
    pub fn update(w: &mut [u64], v: Value) {
        match v {
            Value::Int(i) => add_int(w, i128::from(i)),
            Value::Float(f) => add_float(w, f),
            // Exact decimal sums come with the decimal aggregates; until then, as a float.
            Value::Dec(d) => add_float(w, rust_decimal::prelude::ToPrimitive::to_f64(&d).unwrap_or(f64::NAN)),
            Value::Null | Value::Hash(_) => return,
        }
        w[3] += 1;
    }

    pub fn merge(w: &mut [u64], from: &[u64]) {
        add_int(w, int(from));
        if from[3] & HAS_FLOAT != 0 {
            add_float(w, f64::from_bits(from[2]));
        }
        w[3] += from[3] & !HAS_FLOAT;
    }

    /// Non-null inputs.
    pub fn n(w: &[u64]) -> u64 {
        w[3] & !HAS_FLOAT
    }

    /// The exact integer total, if every input was an integer.
    pub fn exact(w: &[u64]) -> Option<i128> {
        (w[3] & HAS_FLOAT == 0).then(|| int(w))
    }

    pub fn total_f64(w: &[u64]) -> f64 {
        int(w) as f64 + f64::from_bits(w[2])
    }
}

/// `min`/`max` over their 2 words: the winning input as given.
mod extreme {
    use super::Num;

    pub const WORDS: usize = 2;

    #[inline(always)]
    pub fn get(w: &[u64]) -> Option<Num> {
        match w[0] {
            1 => Some(Num::Int(w[1] as i64)),
            2 => Some(Num::Float(f64::from_bits(w[1]))),
            _ => None,
        }
    }

    #[inline(always)]
    pub fn set(w: &mut [u64], n: Num) {
        match n {
            Num::Int(i) => {
                w[0] = 1;
                w[1] = i as u64;
            }
            Num::Float(f) => {
                w[0] = 2;
                w[1] = f.to_bits();
            }
        }
    }

    /// Keeps `x` if it beats the current value (`max`: greater; `min`: less); ties keep the first.
    #[inline(always)]
    pub fn offer(w: &mut [u64], x: Num, max: bool) {
        let wins = match get(w) {
            None => true,
            Some(cur) if max => cur.less_than(x),
            Some(cur) => x.less_than(cur),
        };
        if wins {
            set(w, x);
        }
    }
}

/// The `count_distinct` sketches of one table (or one session), indexed from the rows' words.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sketches {
    items: Vec<Distinct>,
}

impl Sketches {
    #[inline]
    fn get(&self, w: u64) -> Option<&Distinct> {
        w.checked_sub(1).and_then(|i| self.items.get(i as usize))
    }

    /// The sketch of word `w`, created (empty) on first use.
    #[inline]
    fn get_or_new(&mut self, w: &mut u64) -> &mut Distinct {
        if *w == 0 || *w as usize > self.items.len() {
            self.items.push(Distinct::new());
            *w = self.items.len() as u64;
        }
        &mut self.items[*w as usize - 1]
    }

    /// Drops every sketch (the rows pointing at them must be cleared too).
    pub fn clear(&mut self) {
        self.items.clear();
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[inline]
fn to_num(v: Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::Int(i)),
        Value::Float(f) if !f.is_nan() => Some(Num::Float(f)),
        Value::Dec(d) => rust_decimal::prelude::ToPrimitive::to_f64(&d).map(Num::Float),
        _ => None,
    }
}

/// Where an aggregate reads its inputs: an event's inline slots, or an event with its payload.
pub trait Values {
    fn value(&self, slot: usize) -> Value;
}

impl Values for Event {
    #[inline(always)]
    fn value(&self, slot: usize) -> Value {
        if slot < crate::event::INLINE_VALUES {
            Event::value(self, slot)
        } else {
            Value::Null
        }
    }
}

impl Values for Rec<'_> {
    #[inline]
    fn value(&self, slot: usize) -> Value {
        Rec::value(self, slot)
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
    /// First word of this aggregate's state in a row's accumulator words.
    at: usize,
    /// `,"name":` pre-rendered.
    prefix: Box<[u8]>,
}

fn words_of(func: AggFunc) -> usize {
    match func {
        AggFunc::Count | AggFunc::CountDistinct => 1,
        AggFunc::Sum | AggFunc::Avg => sum::WORDS,
        AggFunc::Min | AggFunc::Max => extreme::WORDS,
    }
}

/// The accumulators of a window's aggregate list, in plan order, as `words()` words per key.
#[derive(Debug, Clone)]
pub struct AggLayout {
    specs: Vec<Spec>,
    words: usize,
}

impl AggLayout {
    /// Whether some accumulator is an index into the sketch arena (`count_distinct`): such rows
    /// cannot be copied as plain words.
    pub fn has_sketches(&self) -> bool {
        self.specs.iter().any(|s| s.func == AggFunc::CountDistinct)
    }

    /// `slots[i]` is the event value slot aggregate `i` reads (`None` for `count()`).
    ///
    /// # Panics
    /// The plan builder gives every aggregate with a field its slot.
    pub fn new(aggs: &[AggPlan]) -> AggLayout {
        let mut at = 0;
        let specs = aggs
            .iter()
            .map(|a| {
                let slot = a.slot;
                let mut prefix = vec![b','];
                write_json_str(&mut prefix, &a.name);
                prefix.push(b':');
                let spec = Spec {
                    func: a.func,
                    slot,
                    at,
                    prefix: prefix.into_boxed_slice(),
                };
                at += words_of(a.func);
                spec
            })
            .collect();
        AggLayout { specs, words: at }
    }

    /// Number of aggregates.
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Words of one key's accumulator set; all zeros is the empty set.
    pub fn words(&self) -> usize {
        self.words
    }

    /// Updates the set `accs` (exactly `words()` long) from one event's value slots.
    #[inline(always)]
    pub fn update<V: Values + ?Sized>(&self, accs: &mut [u64], event: &V, sketches: &mut Sketches) {
        for spec in &self.specs {
            let w = &mut accs[spec.at..spec.at + words_of(spec.func)];
            let v = match spec.slot {
                // count() counts rows; count(field) and every other aggregate skip nulls.
                None => {
                    w[0] += 1;
                    continue;
                }
                Some(s) => event.value(s),
            };
            if v == Value::Null {
                continue;
            }
            match spec.func {
                AggFunc::Count => w[0] += 1,
                AggFunc::Sum | AggFunc::Avg => sum::update(w, v),
                AggFunc::Min | AggFunc::Max => {
                    if let Some(x) = to_num(v) {
                        extreme::offer(w, x, spec.func == AggFunc::Max);
                    }
                }
                AggFunc::CountDistinct => {
                    let h = match v {
                        Value::Hash(h) => h,
                        Value::Int(i) => mix64(i as u64),
                        Value::Float(f) => mix64(f.to_bits()),
                        // The canonical text, as for any other value a record carries.
                        Value::Dec(d) => crate::event::hash_key(d.normalize().to_string().as_bytes()),
                        Value::Null => continue,
                    };
                    sketches.get_or_new(&mut w[0]).insert(h);
                }
            }
        }
    }

    /// Merges the set `from` (later events or another pane; its sketches in `from_sketches`) into
    /// `into` (sketches in `into_sketches`).
    pub fn merge(
        &self,
        into: &mut [u64],
        into_sketches: &mut Sketches,
        from: &[u64],
        from_sketches: &Sketches,
    ) {
        for spec in &self.specs {
            let r = spec.at..spec.at + words_of(spec.func);
            let (w, f) = (&mut into[r.clone()], &from[r]);
            match spec.func {
                AggFunc::Count => w[0] += f[0],
                AggFunc::Sum | AggFunc::Avg => sum::merge(w, f),
                AggFunc::Min | AggFunc::Max => {
                    if let Some(x) = extreme::get(f) {
                        extreme::offer(w, x, spec.func == AggFunc::Max);
                    }
                }
                AggFunc::CountDistinct => {
                    if let Some(d) = from_sketches.get(f[0]) {
                        into_sketches.get_or_new(&mut w[0]).merge(d);
                    }
                }
            }
        }
    }

    /// Appends one set to a state snapshot: its words, with each `count_distinct` sketch inline
    /// instead of its arena index (so a row can move to another table, or shard, alone).
    pub fn encode(&self, accs: &[u64], sketches: &Sketches, e: &mut Enc) {
        for spec in &self.specs {
            let w = &accs[spec.at..spec.at + words_of(spec.func)];
            match spec.func {
                AggFunc::CountDistinct => match sketches.get(w[0]) {
                    None => e.u8(0),
                    Some(d) => {
                        e.u8(1);
                        d.encode(e);
                    }
                },
                _ => w.iter().for_each(|&x| e.u64(x)),
            }
        }
    }

    /// Reads a set written by `encode` into `accs` (exactly `words()` long), its sketches into
    /// `sketches`.
    pub fn decode(
        &self,
        d: &mut Dec,
        accs: &mut [u64],
        sketches: &mut Sketches,
    ) -> Result<(), String> {
        for spec in &self.specs {
            let w = &mut accs[spec.at..spec.at + words_of(spec.func)];
            match spec.func {
                AggFunc::CountDistinct => {
                    w[0] = 0;
                    if d.u8("count_distinct")? == 1 {
                        sketches.items.push(Distinct::decode(d)?);
                        w[0] = sketches.items.len() as u64;
                    }
                }
                _ => {
                    for x in w.iter_mut() {
                        *x = d.u64("accumulator")?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Appends `,"name":value` for every aggregate, in plan order. See the module doc for the rules.
    pub fn write_fields(&self, accs: &[u64], sketches: &Sketches, out: &mut Vec<u8>) {
        for spec in &self.specs {
            out.extend_from_slice(&spec.prefix);
            let w = &accs[spec.at..spec.at + words_of(spec.func)];
            match spec.func {
                AggFunc::Count => write_u64(w[0], out),
                AggFunc::CountDistinct => {
                    write_u64(sketches.get(w[0]).map_or(0, Distinct::estimate), out)
                }
                AggFunc::Sum | AggFunc::Avg if sum::n(w) == 0 => out.extend_from_slice(b"null"),
                AggFunc::Sum => match sum::exact(w).map(i64::try_from) {
                    Some(Ok(i)) => write_i64(i, out),
                    _ => write_f64(out, sum::total_f64(w)),
                },
                AggFunc::Avg => write_f64(out, sum::total_f64(w) / sum::n(w) as f64),
                AggFunc::Min | AggFunc::Max => match extreme::get(w) {
                    None => out.extend_from_slice(b"null"),
                    Some(Num::Int(i)) => write_i64(i, out),
                    Some(Num::Float(f)) => write_f64(out, f),
                },
            }
        }
    }
}

#[cfg(test)]
#[path = "aggregate_tests.rs"]
mod tests;
