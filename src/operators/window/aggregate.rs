//! Window aggregate accumulators: one running state per (key, window, aggregate), updated per event.
//!
//! Owns the arithmetic and JSON rendering of `count`, `sum`, `min`, `max`, `avg`,
//! `count_distinct` and `approx_count_distinct`, and how their states are laid out. A key's states are plain words (`u64`),
//! laid out by an [`AggLayout`] in a row of the state table, so one key's whole state sits next to
//! its key in one or two cache lines; all zeros is every aggregate's empty state. It never buffers
//! events and never allocates on update, except the distinct counts, whose counters
//! ([`super::distinct`]) live beside the rows in a [`Sketches`] arena: an exact `count_distinct`
//! grows with the group's distinct values, an `approx_count_distinct` to at most 4 KiB.
//!
//! Semantics (SQL-like; every accumulator merges associatively, so panes and session merges give
//! the same result as feeding the events one by one):
//! - `count()` counts rows; `count(field)` counts non-null values of `field`.
//! - A record marked `RETRACT` (an upstream window's previous result, re-fired) is taken back out
//!   of `count`, `sum` and `avg`; `min`, `max` and the distinct counts cannot take a value back, and
//!   the plan refuses them over such an input.
//! - Every other aggregate ignores `Null` (absent field or JSON `null`); one that saw only nulls
//!   renders `null`, except the distinct counts, which render `0`.
//! - `sum` is exact over integers and decimals: integers alone render an integer if the total fits
//!   in `i64` (a float beyond); with a decimal among the inputs, the exact decimal total renders
//!   with the largest scale among them, as SQL prints it (`1.2345 + 2.0000` is `3.2345`,
//!   `0.10 + 0.20` is `0.30`, `1 + 2.50` is `3.50`). A total of more than 28 digits (more than a
//!   decimal holds) renders the float sum, as does any float input (a number no decimal holds).
//! - `avg` over inputs with a decimal (and no float) is the exact decimal `sum / n`, rounded and
//!   with trailing zeros dropped as the expression language divides decimals (`avg(1.00, 2.00)`
//!   is `1.5`); over integers alone, or with a float, it is a float, as before decimals existed
//!   (`avg(1, 2)` is `1.5`, `avg(2, 2)` is `2.0`).
//! - `min`/`max` render the winning input exactly as given (an integer stays an integer, `2.50`
//!   stays `2.50`); integers, decimals and floats compare numerically and exactly; NaN inputs are
//!   ignored; on ties the first seen wins (`min(2.50, 2.5)` is `2.50`).
//! - Floats render as the shortest string that round-trips, always a JSON number distinguishable
//!   from an integer (`3.0`, `1e17`); NaN and ±infinity (which JSON cannot hold) render `null`.
//! - `count_distinct` and `approx_count_distinct` take `Value::Hash` (the binding hashes each
//!   value's canonical token, a number by its value: `2.5` and `2.50` count once); see
//!   [`super::distinct`] for the exact counter's collision bound and the sketch's error.
//!
//! Words per aggregate (all zeros is the empty state; [`super::numbers`] has the bits):
//!
//! ```text
//! count           1  the count
//! sum, avg        4  w0 w1: exact total of integers and decimals x 10^scale (i128)
//!                    w2: float total; w3: non-null inputs (56 bits), scale, has-decimal,
//!                    inexact and has-float flags
//! min, max        2  w0: kind (0 none, 1 integer, 2 float, 3 decimal) with a decimal's scale,
//!                    sign and mantissa bits 64..96; w1: the value's bits (a decimal's 0..64)
//! count_distinct  1  0: no counter yet, else the counter's index in the arena plus one
//!   (exact or approximate)
//! ```

use super::distinct::{Distinct, Mode};
use super::numbers::sum::{self, Total};
use super::numbers::{extreme, Num};
use crate::checkpoint::codec::{Dec, Enc};
use crate::plan::{AggFunc, AggPlan};
use crate::record::event::{number_hash, Event, Rec, Value, RETRACT};
use crate::record::text::{write_i64, write_u64};

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

    /// Takes `hash` out of the exact distinct counter of word `w` (a retracted value whose last
    /// row is gone); nothing for an approximate one or an empty word.
    pub(crate) fn remove(&mut self, w: u64, hash: u64) {
        if let Some(d) = w
            .checked_sub(1)
            .and_then(|i| self.items.get_mut(i as usize))
        {
            d.remove(hash);
        }
    }

    /// Drops every sketch (the rows pointing at them must be cleared too).
    pub fn clear(&mut self) {
        self.items.clear();
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Bytes the counters hold (for state-size reporting; walks every counter).
    pub fn bytes(&self) -> usize {
        self.items.capacity() * std::mem::size_of::<Distinct>()
            + self.items.iter().map(Distinct::heap_bytes).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The hash a distinct count keeps of `v`: records hash their values where they are read
/// (`Value::Hash`); a number that arrives as one hashes as the binding would hash its token.
#[inline]
pub(crate) fn distinct_hash(v: Value) -> Option<u64> {
    match v {
        Value::Hash(h) => Some(h),
        v => number_hash(v),
    }
}

/// A value as a number MIN and MAX compare (`None`: not a number, or NaN).
#[inline]
pub(crate) fn to_num(v: Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::Int(i)),
        Value::Float(f) if !f.is_nan() => Some(Num::Float(f)),
        Value::Dec(d) => Some(Num::Dec(d)),
        _ => None,
    }
}

/// Where an aggregate reads its inputs: an event's inline slots, or an event with its payload.
pub trait Values {
    fn value(&self, slot: usize) -> Value;
    /// The record withdraws an earlier one of its stream (`event::RETRACT`: an upstream window's
    /// previous result): its values are taken back out instead of added.
    fn retracts(&self) -> bool {
        false
    }
}

impl Values for Event {
    #[inline(always)]
    fn value(&self, slot: usize) -> Value {
        if slot < crate::record::event::INLINE_VALUES {
            Event::value(self, slot)
        } else {
            Value::Null
        }
    }

    #[inline(always)]
    fn retracts(&self) -> bool {
        self.flags & RETRACT != 0
    }
}

impl Values for Rec<'_> {
    #[inline]
    fn value(&self, slot: usize) -> Value {
        Rec::value(self, slot)
    }

    #[inline]
    fn retracts(&self) -> bool {
        self.ev.flags & RETRACT != 0
    }
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

/// A decimal as written: every digit of its scale (`2.50`, `0.30`, `3`).
fn write_dec(out: &mut Vec<u8>, d: rust_decimal::Decimal) {
    use std::io::Write;
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{d}");
}

/// `total / n` (`n` > 0): over decimals the exact quotient, rounded where a decimal's 96-bit
/// mantissa ends (28 or 29 significant digits) and without trailing zeros, as the expression
/// language divides decimals; a float otherwise.
fn write_avg(out: &mut Vec<u8>, total: Total, n: u64) {
    match total {
        Total::Dec(d) => match d.checked_div(rust_decimal::Decimal::from(n)) {
            Some(q) => write_dec(out, q.normalize()),
            None => write_f64(
                out,
                super::numbers::scaled_to_f64(d.mantissa(), d.scale()) / n as f64,
            ),
        },
        Total::Int(m) => write_f64(out, m as f64 / n as f64),
        Total::Float(f) => write_f64(out, f / n as f64),
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

/// The distinct counter's mode of a distinct aggregate (`Approx` is never reached for others).
#[inline]
fn mode_of(func: AggFunc) -> Mode {
    func.distinct_mode().unwrap_or(Mode::Approx)
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
        AggFunc::Count | AggFunc::CountDistinct | AggFunc::ApproxCountDistinct => 1,
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
        self.specs.iter().any(|s| s.func.distinct_mode().is_some())
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

    /// The first accumulator word of aggregate `i`.
    pub fn at(&self, i: usize) -> usize {
        self.specs[i].at
    }

    /// Updates the set `accs` (exactly `words()` long) from one event's value slots.
    #[inline(always)]
    pub fn update<V: Values + ?Sized>(&self, accs: &mut [u64], event: &V, sketches: &mut Sketches) {
        // A retraction counts -1 (counts wrap, so one arriving in another pane or partial than
        // its record still merges to the right total).
        let back = event.retracts();
        let one = if back { u64::MAX } else { 1 };
        for spec in &self.specs {
            let w = &mut accs[spec.at..spec.at + words_of(spec.func)];
            let v = match spec.slot {
                // count() counts rows; count(field) and every other aggregate skip nulls.
                None => {
                    w[0] = w[0].wrapping_add(one);
                    continue;
                }
                Some(s) => event.value(s),
            };
            if v == Value::Null {
                continue;
            }
            match spec.func {
                AggFunc::Count => w[0] = w[0].wrapping_add(one),
                AggFunc::Sum | AggFunc::Avg if back => sum::retract(w, v),
                AggFunc::Sum | AggFunc::Avg => sum::update(w, v),
                // min, max and count_distinct cannot take a value back; the plan refuses them
                // over an input with retractions, so none arrives here in a job.
                AggFunc::Min
                | AggFunc::Max
                | AggFunc::CountDistinct
                | AggFunc::ApproxCountDistinct
                    if back => {}
                AggFunc::Min | AggFunc::Max => {
                    if let Some(x) = to_num(v) {
                        extreme::offer(w, x, spec.func == AggFunc::Max);
                    }
                }
                AggFunc::CountDistinct | AggFunc::ApproxCountDistinct => {
                    let Some(h) = distinct_hash(v) else {
                        continue;
                    };
                    sketches.get_or_new(&mut w[0]).insert(h, mode_of(spec.func));
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
                AggFunc::Count => w[0] = w[0].wrapping_add(f[0]),
                AggFunc::Sum | AggFunc::Avg => sum::merge(w, f),
                AggFunc::Min | AggFunc::Max => {
                    if let Some(x) = extreme::get(f) {
                        extreme::offer(w, x, spec.func == AggFunc::Max);
                    }
                }
                AggFunc::CountDistinct | AggFunc::ApproxCountDistinct => {
                    if let Some(d) = from_sketches.get(f[0]) {
                        into_sketches
                            .get_or_new(&mut w[0])
                            .merge(d, mode_of(spec.func));
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
                AggFunc::CountDistinct | AggFunc::ApproxCountDistinct => match sketches.get(w[0]) {
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

    /// Reads a partial's payload (one set written by `encode`, nothing after it) into `into`,
    /// replacing what it held: phase two of `hot_keys`.
    pub fn decode_partial(
        &self,
        blob: &[u8],
        into: &mut (Vec<u64>, Sketches),
    ) -> Result<(), String> {
        let (accs, sketches) = into;
        accs.clear();
        accs.resize(self.words(), 0);
        sketches.clear();
        let mut d = Dec::new(blob);
        self.decode(&mut d, accs, sketches)?;
        if !d.is_empty() {
            return Err("bytes after the accumulators".into());
        }
        Ok(())
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
                AggFunc::CountDistinct | AggFunc::ApproxCountDistinct => {
                    w[0] = 0;
                    if d.u8("count_distinct")? == 1 {
                        let counter = Distinct::decode(d)?;
                        if !counter.fits(mode_of(spec.func)) {
                            return Err(format!(
                                "a distinct counter of the wrong kind for {:?} (the job changed an aggregate between count_distinct and approx_count_distinct: start it without this snapshot)",
                                spec.func
                            ));
                        }
                        sketches.items.push(counter);
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
                AggFunc::CountDistinct | AggFunc::ApproxCountDistinct => {
                    write_u64(sketches.get(w[0]).map_or(0, Distinct::estimate), out)
                }
                AggFunc::Sum | AggFunc::Avg if sum::n(w) == 0 => out.extend_from_slice(b"null"),
                AggFunc::Sum => match sum::total(w) {
                    Total::Int(m) => match i64::try_from(m) {
                        Ok(i) => write_i64(i, out),
                        Err(_) => write_f64(out, m as f64),
                    },
                    Total::Dec(d) => write_dec(out, d),
                    Total::Float(f) => write_f64(out, f),
                },
                AggFunc::Avg => write_avg(out, sum::total(w), sum::n(w)),
                AggFunc::Min | AggFunc::Max => match extreme::get(w) {
                    None => out.extend_from_slice(b"null"),
                    Some(Num::Int(i)) => write_i64(i, out),
                    Some(Num::Float(f)) => write_f64(out, f),
                    Some(Num::Dec(d)) => write_dec(out, d),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests;
