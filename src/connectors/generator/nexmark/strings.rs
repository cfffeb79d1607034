//! The random values of the Nexmark model ([`super::model`]), one function per Java helper of
//! `StringsGenerator`, `PriceGenerator` and `BidGenerator`'s url cache, drawing from the per-event
//! [`Rng`]. Same draws in the same order as Java, from a different PRNG.

use crate::connectors::generator::model::IndexRng;

/// The per-event PRNG with the draws Java's generators make.
pub(super) struct Rng(pub(super) IndexRng);

impl Rng {
    /// Uniform in `0..n` (Java's `nextInt(n)`/`LongGenerator.nextLong`; `n` of 0 gives 0).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        ((self.0.next() as u128 * n as u128) >> 64) as u64
    }

    pub(super) fn below_usize(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

/// `PriceGenerator.nextPrice`: `Math.round(10^(6 u) * 100)`, log-uniform cents in 1..1e6 dollars.
pub(super) fn next_price(rng: &mut Rng) -> u64 {
    // Java's Math.round is floor(x + 0.5).
    (10f64.powf(rng.0.next_f64() * 6.0) * 100.0 + 0.5).floor() as u64
}

/// `StringsGenerator.nextString`: 3 to `max_len - 1` characters, each `special` with
/// probability 1/13 else a-z, then trimmed of spaces at both ends (as Java's `trim`).
pub(super) fn next_string(rng: &mut Rng, max_len: usize, special: char) -> String {
    let len = 3 + rng.below_usize(max_len - 3);
    let mut s = String::with_capacity(len);
    for _ in 0..len {
        if rng.below(13) == 0 {
            s.push(special);
        } else {
            s.push((b'a' + rng.below(26) as u8) as char);
        }
    }
    let trimmed = s.trim_matches(' ');
    if trimmed.len() == s.len() {
        s
    } else {
        trimmed.to_string()
    }
}

/// `len` random a-z characters, 13 per draw (26^13 < 2^64).
pub(super) fn exact_string(rng: &mut Rng, len: usize) -> String {
    let mut s = String::with_capacity(len);
    while s.len() < len {
        let mut r = rng.0.next();
        for _ in 0..13.min(len - s.len()) {
            s.push((b'a' + (r % 26) as u8) as char);
            r /= 26;
        }
    }
    s
}

/// Four space-separated groups of four digits, as Java's `%04d` of `nextInt(10000)`.
pub(super) fn credit_card(rng: &mut Rng) -> String {
    let mut s = String::with_capacity(19);
    for i in 0..4 {
        if i > 0 {
            s.push(' ');
        }
        let g = rng.below(10_000);
        for d in [1000, 100, 10, 1] {
            s.push((b'0' + (g / d % 10) as u8) as char);
        }
    }
    s
}

/// `BidGenerator.getBaseUrl`: three path segments of 3-4 characters (a-z or `_`).
pub(super) fn base_url(rng: &mut Rng) -> String {
    let parts: Vec<String> = (0..3).map(|_| next_string(rng, 5, '_')).collect();
    format!(
        "https://www.nexmark.com/{}/item.htm?query=1",
        parts.join("/")
    )
}

/// Entry `i` of Java's channel cache: `channel-i`, and with probability 9/10 a `channel_id`
/// parameter that is `Math.abs(Integer.reverse(i))` (for i = 1 that is Java's -2^31, kept).
pub(super) fn channel(i: usize, rng: &mut Rng) -> (String, String) {
    let mut url = base_url(rng);
    if rng.below(10) > 0 {
        let id = (i as i32).reverse_bits().wrapping_abs();
        url.push_str(&format!("&channel_id={id}"));
    }
    (format!("channel-{i}"), url)
}
