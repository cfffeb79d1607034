//! The numeric accumulators of window aggregates, over plain words: the running sum of `sum` and
//! `avg` (integers and decimals exact, floats apart) and the extreme of `min`/`max` (the winning
//! input as given), with exact comparisons across integers, decimals and floats.
//!
//! Words are the aggregate's slice of a row (see `aggregate` for the table of every aggregate's
//! words); all zeros is the empty state. Every update and merge is total: no input and no pair of
//! states (a damaged snapshot included) can make them panic.

use rust_decimal::Decimal;
use std::cmp::Ordering;

/// A number as `min`/`max` keep it: the input exactly as given (a decimal keeps its scale).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i64),
    Float(f64),
    Dec(Decimal),
}

impl Num {
    /// Numeric order, exact across kinds; neither side is NaN (NaN never enters a `Num`).
    #[inline]
    pub fn less_than(self, other: Num) -> bool {
        let o = match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.cmp(&b),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
            (Num::Dec(a), Num::Dec(b)) => a.cmp(&b),
            (Num::Int(a), Num::Float(b)) => cmp_int_float(a, b),
            (Num::Float(a), Num::Int(b)) => cmp_int_float(b, a).reverse(),
            (Num::Int(a), Num::Dec(b)) => Decimal::from(a).cmp(&b),
            (Num::Dec(a), Num::Int(b)) => a.cmp(&Decimal::from(b)),
            (Num::Dec(a), Num::Float(b)) => cmp_dec_float(a, b),
            (Num::Float(a), Num::Dec(b)) => cmp_dec_float(b, a).reverse(),
        };
        o == Ordering::Less
    }
}

/// Exact comparison of an integer with a non-NaN float (`i as f64` would round above 2^53).
pub fn cmp_int_float(i: i64, f: f64) -> Ordering {
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

/// Exact comparison of a decimal with a non-NaN float: integral parts as integers, then the
/// fractions as integers scaled to a common denominator (no rounding through `f64` either way).
pub fn cmp_dec_float(d: Decimal, f: f64) -> Ordering {
    // Every decimal is below 2^96 in magnitude (a 96-bit mantissa); 2^96 is exact in f64.
    const TWO_96: f64 = 79_228_162_514_264_337_593_543_950_336.0;
    if f >= TWO_96 {
        return Ordering::Less;
    }
    if f <= -TWO_96 {
        return Ordering::Greater;
    }
    let t = f.trunc();
    let fi = t as i128; // exact: |t| < 2^96
    let unit = 10i128.pow(d.scale().min(28));
    let m = d.mantissa();
    let di = m / unit; // truncates toward zero, as `trunc` does
    if di != fi {
        return di.cmp(&fi);
    }
    // Same integral part: compare the fractions r / 10^scale and `f - t` (exact in f64), both
    // in (-1, 1) and, where nonzero, of their number's sign.
    let r = m - di * unit;
    let ff = f - t;
    let (rs, fs) = (r.signum(), if ff > 0.0 { 1 } else { -i128::from(ff < 0.0) });
    if rs != fs || rs == 0 {
        return rs.cmp(&fs);
    }
    let mag = cmp_fraction(r.unsigned_abs(), d.scale().min(28), ff.abs());
    if rs > 0 {
        mag
    } else {
        mag.reverse()
    }
}

/// `a / 10^s` against `g` (0 < g < 1, `a` > 0 and below `10^s`), exactly: with `g = m / 2^k`,
/// compares `a * 2^k` with `m * 5^s * 2^s`, cancelling the common powers of two so both sides fit
/// 128 bits or are known to be the larger one.
fn cmp_fraction(a: u128, s: u32, g: f64) -> Ordering {
    let bits = g.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (m, k) = if exp == 0 {
        (frac, 1074) // subnormal: frac * 2^-1074
    } else {
        (frac | (1 << 52), 1075 - exp)
    };
    let rhs = u128::from(m) * 5u128.pow(s); // < 2^53 * 5^28 < 2^119
    let k = k.max(0) as u32;
    if k >= s {
        let shift = k - s;
        if shift >= 128 || a.leading_zeros() < shift {
            return Ordering::Greater; // a * 2^shift >= 2^128 > rhs
        }
        (a << shift).cmp(&rhs)
    } else {
        let shift = s - k;
        if rhs.leading_zeros() < shift {
            return Ordering::Less;
        }
        a.cmp(&(rhs << shift))
    }
}

/// `m / 10^s` as the nearest `f64` we can cheaply get (for float results).
pub fn scaled_to_f64(m: i128, s: u32) -> f64 {
    if s == 0 {
        return m as f64;
    }
    match Decimal::try_from_i128_with_scale(m, s) {
        Ok(d) => rust_decimal::prelude::ToPrimitive::to_f64(&d).unwrap_or(f64::NAN),
        Err(_) => {
            let unit = 10i128.pow(s.min(28));
            (m / unit) as f64 + (m % unit) as f64 / unit as f64
        }
    }
}

/// The running sum of `sum` and `avg` over its 4 words:
///
/// ```text
/// w0, w1  exact total of integer and decimal inputs, times 10^scale, as an i128 (low, high)
/// w2      f64 total of float inputs (and, once INEXACT, of everything)
/// w3      bits 0..56 non-null inputs | 56..61 scale: the largest input scale (0..=28)
///         | 61 HAS_DEC | 62 INEXACT | 63 HAS_FLOAT
/// ```
///
/// Integers alone can never leave the i128 (fewer than 2^56 inputs of at most 2^63 each). With
/// decimals the total is rescaled to the largest scale seen, exactly; if that ever leaves the
/// i128 (a total of more than 38 digits at its scale), the sum is INEXACT: the exact part moves
/// into the float word and everything after it is added as a float, and the result renders as
/// that float. The exact total does not depend on the order of inputs or merges; only where a
/// partial total passes 38 digits can the grouping decide whether a result is INEXACT.
pub mod sum {
    use super::{scaled_to_f64, Decimal};
    use crate::record::event::Value;

    pub const WORDS: usize = 4;

    const COUNT: u64 = (1 << 56) - 1;
    const SCALE_SHIFT: u32 = 56;
    const SCALE: u64 = 31 << SCALE_SHIFT;
    const HAS_DEC: u64 = 1 << 61;
    const INEXACT: u64 = 1 << 62;
    const HAS_FLOAT: u64 = 1 << 63;

    /// A sum as it renders.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub enum Total {
        /// Every input an integer: the exact total.
        Int(i128),
        /// Decimals (and integers), no float: the exact total at the largest input scale.
        Dec(Decimal),
        /// Some input a float, or a decimal total beyond what a decimal holds.
        Float(f64),
    }

    #[inline(always)]
    fn exact(w: &[u64]) -> i128 {
        (i128::from(w[1] as i64) << 64) | i128::from(w[0])
    }

    #[inline(always)]
    fn set_exact(w: &mut [u64], v: i128) {
        w[0] = v as u64;
        w[1] = (v >> 64) as u64;
    }

    #[inline(always)]
    fn scale(w: &[u64]) -> u32 {
        (((w[3] & SCALE) >> SCALE_SHIFT) as u32).min(28)
    }

    #[inline(always)]
    fn set_scale(w: &mut [u64], s: u32) {
        w[3] = (w[3] & !SCALE) | (u64::from(s.min(28)) << SCALE_SHIFT);
    }

    /// `v` (at scale `from`) at scale `to` (>= `from`), if it fits.
    #[inline]
    fn rescale(v: i128, from: u32, to: u32) -> Option<i128> {
        if to == from {
            return Some(v);
        }
        10i128
            .checked_pow(to.saturating_sub(from))
            .and_then(|p| v.checked_mul(p))
    }

    #[inline(always)]
    fn add_float(w: &mut [u64], f: f64) {
        w[2] = (f64::from_bits(w[2]) + f).to_bits();
    }

    /// Leaves exact arithmetic: the exact part (and `extra`) go into the float word.
    #[cold]
    fn go_inexact(w: &mut [u64], extra: f64) {
        let e = scaled_to_f64(exact(w), scale(w));
        add_float(w, e + extra);
        set_exact(w, 0);
        w[3] |= INEXACT;
    }

    /// Adds `m / 10^s` to the exact total.
    #[inline(always)]
    fn add_exact(w: &mut [u64], m: i128, s: u32) {
        if w[3] & INEXACT != 0 {
            add_float(w, scaled_to_f64(m, s));
            return;
        }
        let have = scale(w);
        let to = have.max(s);
        let total = rescale(exact(w), have, to)
            .zip(rescale(m, s, to))
            .and_then(|(a, b)| a.checked_add(b));
        match total {
            Some(t) => {
                set_exact(w, t);
                set_scale(w, to);
            }
            None => {
                go_inexact(w, scaled_to_f64(m, s));
                set_scale(w, to);
            }
        }
    }

    #[inline(always)]
    fn count_add(w: &mut [u64], n: u64) {
        w[3] = (w[3] & !COUNT) | (w[3].wrapping_add(n) & COUNT);
    }

    #[inline(always)]
    pub fn update(w: &mut [u64], v: Value) {
        // The common case, integers alone, as cheap as before decimals: fewer than 2^64 inputs
        // below 2^63 each cannot leave the i128, so no check is needed, and the count cannot
        // carry into the flags unless it is all ones (a retraction took it below zero).
        if let Value::Int(i) = v {
            if w[3] & (SCALE | INEXACT | HAS_DEC) == 0 && w[3] & COUNT != COUNT {
                set_exact(w, exact(w).wrapping_add(i128::from(i)));
                w[3] += 1;
                return;
            }
        }
        update_any(w, v);
    }

    /// Every other input; out of line so that the integer path stays small where it is inlined.
    #[inline(never)]
    fn update_any(w: &mut [u64], v: Value) {
        match v {
            Value::Int(i) => add_exact(w, i128::from(i), 0),
            Value::Dec(d) => {
                w[3] |= HAS_DEC;
                add_exact(w, d.mantissa(), d.scale());
            }
            Value::Float(f) => {
                add_float(w, f);
                w[3] |= HAS_FLOAT;
            }
            Value::Null | Value::Hash(_) => return,
        }
        count_add(w, 1);
    }

    /// Takes `v` back out (a retracted record's value): exact for integers and decimals.
    #[inline]
    pub fn retract(w: &mut [u64], v: Value) {
        match v {
            // i128: the negation of any i64 fits.
            Value::Int(i) => add_exact(w, -i128::from(i), 0),
            Value::Dec(d) => {
                w[3] |= HAS_DEC;
                add_exact(w, -d.mantissa(), d.scale());
            }
            Value::Float(f) => {
                add_float(w, -f);
                w[3] |= HAS_FLOAT;
            }
            Value::Null | Value::Hash(_) => return,
        }
        count_add(w, COUNT); // -1 modulo the count's width
    }

    pub fn merge(w: &mut [u64], from: &[u64]) {
        let (n, flags) = (from[3] & COUNT, from[3] & (HAS_DEC | INEXACT | HAS_FLOAT));
        if flags & (HAS_FLOAT | INEXACT) != 0 {
            add_float(w, f64::from_bits(from[2]));
        }
        let (m, s) = (exact(from), scale(from));
        if flags & INEXACT != 0 && w[3] & INEXACT == 0 {
            go_inexact(w, 0.0);
        }
        w[3] |= flags;
        add_exact(w, m, s);
        count_add(w, n);
    }

    /// Non-null inputs.
    pub fn n(w: &[u64]) -> u64 {
        w[3] & COUNT
    }

    /// The total, as it renders (see the module doc of `aggregate` for the rules).
    pub fn total(w: &[u64]) -> Total {
        let (m, s) = (exact(w), scale(w));
        if w[3] & (HAS_FLOAT | INEXACT) != 0 {
            return Total::Float(scaled_to_f64(m, s) + f64::from_bits(w[2]));
        }
        if w[3] & HAS_DEC == 0 {
            return Total::Int(m);
        }
        match Decimal::try_from_i128_with_scale(m, s) {
            Ok(d) => Total::Dec(d),
            // More than 28 digits: more than a decimal holds.
            Err(_) => Total::Float(scaled_to_f64(m, s)),
        }
    }
}

/// `min`/`max` over their 2 words: the winning input as given.
///
/// ```text
/// w0  bits 0..8 kind: 0 none, 1 integer, 2 float, 3 decimal
///     decimal: | 8..16 scale | 16 negative | 32..64 mantissa bits 64..96
/// w1  integer or float bits; decimal: mantissa bits 0..64
/// ```
pub mod extreme {
    use super::{Decimal, Num};

    pub const WORDS: usize = 2;

    #[inline(always)]
    pub fn get(w: &[u64]) -> Option<Num> {
        match w[0] & 0xff {
            1 => Some(Num::Int(w[1] as i64)),
            2 => Some(Num::Float(f64::from_bits(w[1]))),
            3 => {
                let mag = (i128::from(w[0] >> 32) << 64) | i128::from(w[1]);
                let m = if w[0] & (1 << 16) != 0 { -mag } else { mag };
                let scale = ((w[0] >> 8) & 0xff) as u32;
                Decimal::try_from_i128_with_scale(m, scale.min(28))
                    .ok()
                    .map(Num::Dec)
            }
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
            Num::Dec(d) => {
                let mag = d.mantissa().unsigned_abs(); // below 2^96
                let neg = u64::from(d.is_sign_negative() && mag != 0);
                w[0] = 3 | (u64::from(d.scale()) << 8) | (neg << 16) | (((mag >> 64) as u64) << 32);
                w[1] = mag as u64;
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
