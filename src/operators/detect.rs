//! Live hot-key detection for `hot_keys = { mode = "auto" }`: a space-saving sketch of the keys a
//! shard reads, and the set of keys whose share of its recent events passes the threshold.
//!
//! Space-saving (Metwally et al.) keeps `k` counters; a key not counted takes the smallest
//! counter's place with that count plus one, remembering the count as its possible error. Every
//! key with more than `1/k` of the events is guaranteed a counter, and `count - error` never
//! exceeds its true count, so a key is called hot only on a share it surely has. "Recent": counts
//! halve every period, so a key that cools off stops being hot within a few periods.
//!
//! Detection only decides *where* a key's events are aggregated, never what the results are
//! (see `combine`): a false positive (a hash collision, a key that just cooled) costs a little
//! work, never a wrong number. Owns no state of any window; never allocates per event.

use crate::record::event::{Event, INLINE_KEY_BYTES};

/// About one event in this many is counted (at random gaps of 1 to 2·SAMPLE - 1, so a periodic
/// key pattern cannot alias with the sampling): enough for shares of a few percent, cheap per
/// event.
const SAMPLE: u32 = 4;
/// Counted events between refreshes of the hot set; counts halve at each.
const PERIOD: u64 = 1024;

#[derive(Clone, Copy)]
struct Counter {
    hash: u64,
    count: u64,
    error: u64,
    len: u8,
    key: [u8; INLINE_KEY_BYTES],
}

pub struct Detector {
    threshold: f64,
    counters: Vec<Counter>,
    capacity: usize,
    tick: u32,
    /// xorshift state for the sampling gaps.
    rng: u64,
    /// Counted events since the last refresh, and the decayed total the shares are of.
    fresh: u64,
    total: u64,
    /// Hashes of the hot keys, and a 256-bit filter over their low byte so a cold key costs one
    /// bit test.
    hot: Vec<u64>,
    filter: [u64; 4],
    /// The hot keys with their shares, for the stats.
    report: Vec<(String, f64)>,
}

impl Detector {
    pub fn new(threshold: f64) -> Detector {
        // Twice the counters the guarantee needs (1/k < threshold), so keys near the threshold
        // are counted with little error; 32 at least, 1024 at most.
        let capacity = ((2.0 / threshold).ceil() as usize).clamp(32, 1024);
        Detector {
            threshold,
            counters: Vec::with_capacity(capacity),
            capacity,
            tick: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
            fresh: 0,
            total: 0,
            hot: Vec::new(),
            filter: [0; 4],
            report: Vec::new(),
        }
    }

    /// Counts one read event (one in [`SAMPLE`]).
    #[inline]
    pub fn observe(&mut self, ev: &Event) {
        if self.tick > 0 {
            self.tick -= 1;
            return;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.tick = (self.rng % (2 * SAMPLE as u64 - 1)) as u32;
        self.fresh += 1;
        self.total += 1;
        if let Some(c) = self.counters.iter_mut().find(|c| c.hash == ev.hash) {
            c.count += 1;
            return;
        }
        let fresh = Counter {
            hash: ev.hash,
            count: 1,
            error: 0,
            len: ev.key_len,
            key: ev.key,
        };
        if self.counters.len() < self.capacity {
            self.counters.push(fresh);
            return;
        }
        if let Some(min) = self.counters.iter_mut().min_by_key(|c| c.count) {
            let m = min.count;
            *min = Counter {
                count: m + 1,
                error: m,
                ..fresh
            };
        }
    }

    /// Whether `hash` is in the hot set (as of the last refresh).
    #[inline(always)]
    pub fn is_hot(&self, hash: u64) -> bool {
        let b = (hash & 255) as usize;
        self.filter[b >> 6] & (1 << (b & 63)) != 0 && self.hot.contains(&hash)
    }

    /// Recomputes the hot set if a period has passed. Called only where the caller holds nothing
    /// back (a key's events must not switch between held and sent within one hand-off).
    pub fn refresh_if_due(&mut self) {
        if self.fresh < PERIOD {
            return;
        }
        self.fresh = 0;
        self.hot.clear();
        self.filter = [0; 4];
        self.report.clear();
        let bar = self.threshold * self.total as f64;
        for c in &self.counters {
            let sure = (c.count - c.error) as f64;
            if sure > bar {
                self.hot.push(c.hash);
                let b = (c.hash & 255) as usize;
                self.filter[b >> 6] |= 1 << (b & 63);
                let key = String::from_utf8_lossy(&c.key[..c.len as usize]).replace('\0', ",");
                self.report.push((key, sure / self.total.max(1) as f64));
            }
        }
        for c in &mut self.counters {
            c.count /= 2;
            c.error /= 2;
        }
        self.total /= 2;
    }

    /// The hot keys (group-by values joined by commas) with their recent shares.
    pub fn hot_keys(&self) -> &[(String, f64)] {
        &self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(key: &str) -> Event {
        let mut e = Event::EMPTY;
        assert!(e.set_key(key.as_bytes()));
        e.hash = crate::record::event::hash_key(key.as_bytes());
        e
    }

    #[test]
    fn a_heavy_key_becomes_hot_and_cools_off() {
        let mut d = Detector::new(0.05);
        let hot = ev("\"celebrity\"");
        let others: Vec<Event> = (0..5000).map(|i| ev(&format!("\"k{i}\""))).collect();
        // 30% one key, the rest spread thin: only the heavy one passes 5%.
        for i in 0..40_000usize {
            let e = if i % 10 < 3 {
                &hot
            } else {
                &others[i % others.len()]
            };
            d.observe(e);
            d.refresh_if_due();
        }
        assert!(d.is_hot(hot.hash));
        assert_eq!(d.hot_keys().len(), 1, "{:?}", d.hot_keys());
        assert_eq!(d.hot_keys()[0].0, "\"celebrity\"");
        assert!((d.hot_keys()[0].1 - 0.3).abs() < 0.1, "{:?}", d.hot_keys());
        assert!(others.iter().all(|o| !d.is_hot(o.hash)));
        // It stops: the share falls to nothing.
        for i in 0..80_000usize {
            d.observe(&others[i % others.len()]);
            d.refresh_if_due();
        }
        assert!(!d.is_hot(hot.hash), "{:?}", d.hot_keys());
    }

    #[test]
    fn uniform_keys_are_never_hot() {
        let mut d = Detector::new(0.05);
        let keys: Vec<Event> = (0..100).map(|i| ev(&format!("{i}"))).collect();
        for i in 0..100_000usize {
            d.observe(&keys[(i * 7) % keys.len()]);
            d.refresh_if_due();
            assert!(d.hot_keys().is_empty(), "{:?}", d.hot_keys());
        }
    }
}
