//! The synthetic click model: the one definition of "event `i`" shared by the in-process
//! `generator` source and `sluice loadgen`, so a benchmark on the generator and one on a file that
//! loadgen wrote see exactly the same events.
//!
//! Invariants this module keeps:
//! - [`ClickModel::click`] is a pure function of `(plan, i)`: no state advances between calls, so
//!   any shard can generate any index range in any order and get identical events.
//! - Event time: slot time `start_ms + i * 1000 / events_per_second` (exact integer math), minus a
//!   jitter uniform in `[0, out_of_orderness_ms]`; a late event (probability `late_fraction`) is
//!   exactly `late_by_ms` behind its slot instead. Slot times never decrease, so a non-late event is
//!   never more than `out_of_orderness_ms` behind the largest event time before it.
//! - Keys: `ad_id` is the celebrity `0` with probability `celebrity_share`, otherwise Zipf over
//!   `0..keys` (rank 0 most frequent); `user_id` uniform in `0..users`; `bid` uniform in
//!   `[10, 10000]`.
//!
//! It never does I/O, allocates per event, or knows threads; callers own the buffers.

use super::GeneratorPlan;
use crate::record::text::{write_i64, write_u64};

/// Defaults of the click model; the `generator` source config and `sluice loadgen` both use these.
pub mod defaults {
    pub const SEED: u64 = 42;
    pub const KEYS: u64 = 100_000;
    pub const ZIPF_EXPONENT: f64 = 1.0;
    pub const CELEBRITY_SHARE: f64 = 0.0;
    pub const USERS: u64 = 1_000_000;
    pub const EVENTS_PER_SECOND: u64 = 100_000;
    /// 2023-11-14T22:13:20Z.
    pub const START_MS: i64 = 1_700_000_000_000;
    pub const OUT_OF_ORDERNESS_MS: i64 = 2_000;
    pub const LATE_FRACTION: f64 = 0.0;
    pub const LATE_BY_MS: i64 = 60_000;
}

/// The model with every default and the given event count (`None`: unbounded).
pub fn default_plan(count: Option<u64>) -> GeneratorPlan {
    GeneratorPlan {
        seed: defaults::SEED,
        keys: defaults::KEYS,
        zipf_exponent: defaults::ZIPF_EXPONENT,
        celebrity_share: defaults::CELEBRITY_SHARE,
        users: defaults::USERS,
        events_per_second: defaults::EVENTS_PER_SECOND,
        start_ms: defaults::START_MS,
        out_of_orderness_ms: defaults::OUT_OF_ORDERNESS_MS,
        late_fraction: defaults::LATE_FRACTION,
        late_by_ms: defaults::LATE_BY_MS,
        count,
    }
}

/// One synthetic click. In JSON `ad_id` is `"ad-{ad_id}"` and `user_id` is `"u-{user_id}"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Click {
    pub ad_id: u64,
    pub user_id: u64,
    /// Event time, epoch ms.
    pub ts: i64,
    pub bid: i64,
}

pub const BID_MIN: i64 = 10;
pub const BID_MAX: i64 = 10_000;

/// The model with everything derived from the plan precomputed, so `click` is a few multiplies,
/// one division and (for Zipf keys) one or two `exp`/`log` calls.
///
/// Out-of-range plan values (validated away by the plan builder) are clamped rather than panicking:
/// `keys`, `users` and `events_per_second` of 0 act as 1, negative durations as 0, probabilities
/// outside `[0, 1]` (or NaN) as the nearest bound (NaN as 0), a negative or non-finite Zipf exponent
/// as 0 (uniform) and one above 64 as 64.
#[derive(Debug, Clone)]
pub struct ClickModel {
    seed_key: u64,
    users: u64,
    events_per_second: u64,
    start_ms: i64,
    /// Jitter is drawn in `0..jitter_span` (= out_of_orderness_ms + 1).
    jitter_span: u64,
    late_by_ms: i64,
    /// Probabilities as thresholds on a 53-bit uniform draw: `draw < threshold`.
    late_threshold: u64,
    celebrity_threshold: u64,
    zipf: Zipf,
    count: Option<u64>,
}

impl ClickModel {
    pub fn new(plan: &GeneratorPlan) -> ClickModel {
        ClickModel {
            seed_key: mix64(plan.seed.wrapping_add(GOLDEN)),
            users: plan.users.max(1),
            events_per_second: plan.events_per_second.max(1),
            start_ms: plan.start_ms,
            jitter_span: (plan.out_of_orderness_ms.max(0) as u64).saturating_add(1),
            late_by_ms: plan.late_by_ms.max(0),
            late_threshold: threshold53(plan.late_fraction),
            celebrity_threshold: threshold53(plan.celebrity_share),
            zipf: Zipf::new(plan.keys.max(1), plan.zipf_exponent),
            count: plan.count,
        }
    }

    /// Event `i` of the stream: a pure function of `(plan, i)`.
    #[inline]
    pub fn click(&self, i: u64) -> Click {
        // Fixed draw order: late, jitter, celebrity, user, bid, then the Zipf rejection loop
        // (which takes a variable number of draws, so it comes last).
        let mut rng = IndexRng::new(self.seed_key, i);
        let slot = self.slot_ms(i);
        let late = (rng.next() >> 11) < self.late_threshold;
        let jitter = mul_high(rng.next(), self.jitter_span);
        let ts = if late {
            slot.saturating_sub(self.late_by_ms)
        } else {
            // jitter <= out_of_orderness_ms <= i64::MAX, so the cast is lossless.
            slot.saturating_sub(jitter as i64)
        };
        let celebrity = (rng.next() >> 11) < self.celebrity_threshold;
        let user_id = mul_high(rng.next(), self.users);
        let bid = BID_MIN + mul_high(rng.next(), (BID_MAX - BID_MIN + 1) as u64) as i64;
        let ad_id = if celebrity {
            0
        } else {
            self.zipf.sample(&mut rng)
        };
        Click {
            ad_id,
            user_id,
            ts,
            bid,
        }
    }

    /// Slot time of event `i`: `start_ms + floor(i * 1000 / events_per_second)`, exact.
    #[inline]
    pub fn slot_ms(&self, i: u64) -> i64 {
        let offset = if i <= u64::MAX / 1000 {
            i * 1000 / self.events_per_second
        } else {
            // Beyond 1.8e16 events: rare, so the slow exact path is fine.
            ((i as u128 * 1000) / self.events_per_second as u128).min(u64::MAX as u128) as u64
        };
        self.start_ms
            .saturating_add(offset.min(i64::MAX as u64) as i64)
    }

    /// Number of events; `None` means unbounded.
    pub fn count(&self) -> Option<u64> {
        self.count
    }
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// splitmix64's output function: a bijection on u64 with full avalanche.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A tiny splitmix64 stream for one event index. The start state hashes (seed, i), so streams of
/// neighbouring indices do not overlap (a plain `seed + i * GOLDEN` start would make draw k of
/// index i equal draw 0 of index i + k).
pub(crate) struct IndexRng {
    state: u64,
}

impl IndexRng {
    #[inline]
    pub(crate) fn new(seed_key: u64, i: u64) -> IndexRng {
        IndexRng {
            state: mix64(seed_key ^ i),
        }
    }

    #[inline]
    pub(crate) fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix64(self.state)
    }

    /// Uniform in [0, 1) with 53 bits.
    #[inline]
    pub(crate) fn next_f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Uniform in `0..n` from a uniform u64 (Lemire's multiply; bias below n / 2^64, negligible).
#[inline]
fn mul_high(r: u64, n: u64) -> u64 {
    ((r as u128 * n as u128) >> 64) as u64
}

/// `p` as a threshold on a 53-bit draw: p = 1 gives 2^53, which every draw is below.
fn threshold53(p: f64) -> u64 {
    // `as` saturates and maps NaN to 0.
    (p.clamp(0.0, 1.0) * (1u64 << 53) as f64) as u64
}

/// Zipf over ranks `0..n`, `p(k) ∝ (k+1)^-s`, by Hörmann & Derflinger's rejection-inversion
/// ("Rejection-inversion to generate variates from monotone discrete distributions", 1996), in the
/// form of Apache Commons RNG: O(1) per sample, no table, and `s = 1` handled by the limits of
/// the helper functions (the log form).
#[derive(Debug, Clone)]
struct Zipf {
    n: u64,
    s: f64,
    /// `s == 0`: plain uniform, no floating point.
    uniform: bool,
    h_integral_x1: f64,
    h_integral_n: f64,
    /// Squeeze: `k - x <= squeeze` accepts without evaluating `h_integral`.
    squeeze: f64,
    /// `1 / (1 - s)`; only used where `|x (1 - s)| > 1e-3`, so never where s = 1.
    inv_one_minus_s: f64,
}

impl Zipf {
    fn new(n: u64, s: f64) -> Zipf {
        let s = if s.is_finite() {
            s.clamp(0.0, 64.0)
        } else {
            0.0
        };
        let mut z = Zipf {
            n,
            s,
            uniform: s == 0.0 || n == 1,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            squeeze: 0.0,
            inv_one_minus_s: 1.0 / (1.0 - s),
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n as f64 + 0.5);
        z.squeeze = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// A rank in `0..n`.
    #[inline]
    fn sample(&self, rng: &mut IndexRng) -> u64 {
        if self.uniform {
            return mul_high(rng.next(), self.n);
        }
        // The squeeze alone accepts most draws and rejection is rare, so the cap is never reached
        // in practice; it only guarantees termination whatever floating point does.
        let mut k = 1;
        for _ in 0..64 {
            // u uniform in (h_integral_x1, h_integral_n].
            let u = self.h_integral_n + rng.next_f64() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            // x >= 0.5, so truncation is rounding; an integer cast, not a libm `floor` call.
            k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.squeeze || u >= self.h_integral(kf + 0.5) - self.h(kf) {
                break;
            }
        }
        k - 1
    }

    /// `h(x) = x^-s`.
    #[inline]
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// `H(x) = (x^(1-s) - 1) / (1-s)`, or `ln x` when s = 1.
    #[inline]
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.s) * log_x) * log_x
    }

    /// The inverse of `h_integral`: `(1 + x(1-s))^(1/(1-s))`, or `e^x` when s = 1.
    #[inline]
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        if t.abs() > 1e-3 {
            // helper1(t) * x == ln(1 + t) / (1 - s): a multiply by a constant instead of a
            // divide on the hot path. `ln` rather than `ln_1p` (twice as fast): rounding `1 + t`
            // costs at most 1e-13 relative error this far from 0, far below what sampling sees.
            ((1.0 + t).ln() * self.inv_one_minus_s).exp()
        } else {
            (helper1(t) * x).exp()
        }
    }
}

/// `ln(1 + x) / x`, continuous at 0.
#[inline]
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// `(e^x - 1) / x`, continuous at 0.
#[inline]
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

/// Appends `{"ad_id":"ad-123","user_id":"u-456","ts":1700000000123,"bid":250}` and `'\n'`.
/// Allocates only if `out` must grow.
#[inline]
pub fn write_ndjson(c: &Click, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"ad_id\":\"");
    write_ad_id(c.ad_id, out);
    out.extend_from_slice(b"\",\"user_id\":\"");
    write_user_id(c.user_id, out);
    out.extend_from_slice(b"\",\"ts\":");
    write_i64(c.ts, out);
    out.extend_from_slice(b",\"bid\":");
    write_i64(c.bid, out);
    out.extend_from_slice(b"}\n");
}

/// `ad-{id}`: the `ad_id` string as it appears in JSON, without quotes.
#[inline]
pub fn write_ad_id(id: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(b"ad-");
    write_u64(id, out);
}

/// `u-{id}`: the `user_id` string as it appears in JSON, without quotes.
#[inline]
pub fn write_user_id(id: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(b"u-");
    write_u64(id, out);
}

#[cfg(test)]
mod tests;
