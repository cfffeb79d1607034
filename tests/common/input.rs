//! Seeded input generation: a reproducible RNG and click-event lines shaped by `Gen`.

use super::BASE;

/// xorshift64*: seeded, reproducible, no `rand` dependency.
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng((seed ^ 0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in 0..n (0 when n <= 0).
    pub fn below(&mut self, n: i64) -> i64 {
        if n <= 0 {
            0
        } else {
            (self.next_u64() % n as u64) as i64
        }
    }
    pub fn chance(&mut self, permille: i64) -> bool {
        self.below(1000) < permille
    }
}

/// splitmix64 over indices: the seeded generator of the fuzz and damage suites (`SplitMix(seed)`),
/// whose case counts and figures in README depend on its exact sequence.
pub struct SplitMix(pub u64);
impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (0 when n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Shape of a generated click file: event i sits at slot BASE-relative time, arrives jittered.
#[derive(Clone, Debug)]
pub struct Gen {
    pub n: usize,
    pub base: i64,
    /// Slot i+1 = slot i + 1..=step_max ms.
    pub step_max: i64,
    /// In-bound jitter: ts = slot - below(jitter); keep jitter <= ooo so every event is in bound.
    pub jitter: i64,
    pub keys: i64,
    pub regions: i64,
    pub users: i64,
    /// Per-mille of events sent back beyond the bound by jitter + below(late_extra) ms.
    pub late_permille: i64,
    pub late_extra: i64,
    /// Late events only from this event index on.
    pub late_from: usize,
    /// Per-mille of events whose bid is null or missing.
    pub null_permille: i64,
    /// All timestamps even (with odd session gaps, no two events are exactly `gap` apart).
    pub even_ts: bool,
    /// Per-mille of events for the one hot key `ad-0`; when set, the other ad ids are Zipf
    /// (exponent 1) over `1..keys` instead of the default skew.
    pub hot_permille: i64,
}

impl Gen {
    pub fn new(n: usize, jitter: i64) -> Gen {
        Gen {
            n,
            base: BASE,
            step_max: 400,
            jitter,
            keys: 8,
            regions: 3,
            users: 40,
            late_permille: 0,
            late_extra: 0,
            late_from: 0,
            null_permille: 0,
            even_ts: false,
            hot_permille: 0,
        }
    }
}

pub fn click_line(ts: i64, ad: i64, region: i64, user: i64, bid: Option<Option<i64>>) -> String {
    let bid = match bid {
        Some(Some(b)) => format!(",\"bid\":{b}"),
        Some(None) => ",\"bid\":null".to_string(),
        None => String::new(),
    };
    format!(
        "{{\"ts\":{ts},\"ad_id\":\"ad-{ad}\",\"region\":{region},\"user_id\":\"u{user}\"{bid}}}"
    )
}

/// Generated click lines (no trailing newlines), in arrival order.
pub fn gen_lines(seed: u64, g: &Gen) -> Vec<(i64, String)> {
    let mut rng = Rng::new(seed);
    let mut slot = g.base;
    let mut out = Vec::with_capacity(g.n);
    // Zipf(1) over ranks 1..keys: cumulative weights scaled to integers.
    let zipf: Vec<u64> = (1..g.keys.max(2))
        .scan(0u64, |acc, k| {
            *acc += 1_000_000_000 / k as u64;
            Some(*acc)
        })
        .collect();
    for i in 0..g.n {
        let (mut ts, k) = if g.even_ts {
            slot += 2 * (1 + rng.below(g.step_max / 2));
            (slot - 2 * rng.below(g.jitter / 2), 2)
        } else {
            slot += 1 + rng.below(g.step_max);
            (slot - rng.below(g.jitter), 1)
        };
        if i >= g.late_from && rng.chance(g.late_permille) {
            ts = slot - g.jitter - rng.below(g.late_extra);
            ts -= ts.rem_euclid(k);
        }
        // Skew: low ad ids are more frequent.
        let ad = if g.hot_permille > 0 {
            if rng.chance(g.hot_permille) {
                0
            } else {
                let top = zipf.last().copied().unwrap_or(1);
                let x = rng.next_u64() % top;
                1 + zipf.partition_point(|&c| c <= x) as i64
            }
        } else {
            let a = rng.below(g.keys);
            a * rng.below(g.keys) / g.keys.max(1)
        };
        let bid = if rng.chance(g.null_permille) {
            if rng.chance(500) {
                Some(None)
            } else {
                None
            }
        } else {
            Some(Some(rng.below(10_000)))
        };
        out.push((
            ts,
            click_line(ts, ad, rng.below(g.regions), rng.below(g.users), bid),
        ));
    }
    out
}

/// Joins lines into file content, one per line, each ending in '\n'.
pub fn file_of<S: AsRef<str>>(lines: &[S]) -> String {
    lines.iter().map(|l| format!("{}\n", l.as_ref())).collect()
}
