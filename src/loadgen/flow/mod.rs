//! `sluice loadgen flow`: writes the three inputs of the ad-spend dataflow (impressions, clicks and
//! an ad-price changelog) into one directory, as `flow_impressions.ndjson`, `flow_clicks.ndjson` and
//! `flow_prices.ndjson`. It owns the model of those streams and their writing; it never touches the
//! runtime or any operator.
//!
//! The model (N = `--events` impressions):
//! - Impression `i` is `{"imp_id":i+1,"ad_id":"ad-K","ts":T}` where `K` and `T` are the click
//!   model's `ad_id` and `ts` for index `i` ([`ClickModel`], without late events): Zipf-skewed ads
//!   over `--keys`, slot times at `--rate` per second of event time, each jittered back by up to
//!   `--out-of-orderness-ms`. Written in index order.
//! - With probability [`CLICK_SHARE`] an impression gets one click
//!   `{"click_id":C,"imp_id":..,"ad_id":..,"ts":T+d}`, `d` uniform in `[0, CLICK_DELAY_MAX_MS]`
//!   (beyond the contract job's 10 s join bound on purpose), `click_id` counting up from 1. A share
//!   [`DUPLICATE_SHARE`] of clicks is written twice: mostly as the exact same line a little later
//!   (still within the bound), otherwise as a retry with the same ids and a later `ts` (more than
//!   the bound, less than the 10 min dedupe horizon after the original), so dedupe drops every
//!   second copy and the unique clicks are exactly the first ones.
//! - Prices: every ad has a first version at `start - out_of_orderness - 1`, before any impression
//!   can be, so an inner temporal join always finds one; after impression `i`, with probability
//!   [`PRICE_CHANGE_SHARE`], one uniformly chosen ad gets a new version at `slot(i)` (one ms after
//!   its previous version if that is not later), its price a random walk of at most ±10% between
//!   0.0100 and 9.9999, written with exactly four decimals. Versions of one ad never share a `ts`.
//! - `--late-fraction F`: a click is, with probability F, written only once the file has reached
//!   `ts + late_by_ms` (more than the bound behind; validated), and is never duplicated. A late
//!   click among the last lines can be less late, since few lines follow it.
//!
//! Invariant every file keeps (but late clicks): each line's `ts` is at least the largest `ts`
//! before it in the file minus `--out-of-orderness-ms`. Clicks and prices get a write time
//! `ts + jitter` (jitter in `[0, out_of_orderness]`) and are written in write-time order from a
//! min-heap, so every line's `ts` is at most its write time and at least its write time minus
//! the bound. A heap entry is written once no later impression can produce an earlier write time,
//! so memory is bounded by rate x (click delay + the bound), plus rate x horizon for retries,
//! never by N.
//!
//! Deterministic: the same arguments give byte-identical files. Randomness other than the click
//! model's comes from two sequential splitmix64 streams seeded from `--seed`, one for clicks and
//! one for prices, each drawn in a fixed order; so clicks' settings (`--late-fraction`) change
//! neither impressions nor prices.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use crate::connectors::generator::model::ClickModel;
use crate::loadgen::{LoadgenArgs, LoadgenError, LoadgenReport};
use format::{write_click, write_impression, write_price};

mod format;

/// Defaults of `loadgen flow` where they differ from the click generator's.
pub mod defaults {
    /// Few enough ads that popular ones get many clicks per minute window.
    pub const KEYS: u64 = 1_000;
    /// A tenth of the click generator's: a million impressions then span ~100 s of event time
    /// (several minute windows), and pending clicks stay a few MB.
    pub const EVENTS_PER_SECOND: u64 = 10_000;
    /// Below the contract jobs' 5 s `max_out_of_orderness`, so default files have no late line.
    pub const OUT_OF_ORDERNESS_MS: i64 = 4_000;
}

pub const IMPRESSIONS_FILE: &str = "flow_impressions.ndjson";
pub const CLICKS_FILE: &str = "flow_clicks.ndjson";
pub const PRICES_FILE: &str = "flow_prices.ndjson";

/// Share of impressions that get a click.
pub const CLICK_SHARE: f64 = 0.6;
/// Clicks come `[0, 12 s]` after their impression: a sixth fall outside a 10 s join bound.
pub const CLICK_DELAY_MAX_MS: i64 = 12_000;
/// Share of (non-late) clicks written a second time.
pub const DUPLICATE_SHARE: f64 = 0.05;
/// Of the duplicates, the share that are exact copies of the line; the rest are later retries.
pub const EXACT_DUPLICATE_SHARE: f64 = 0.75;
/// Retries come less than this after the original: the contract job's dedupe horizon.
pub const DEDUPE_HORIZON_MS: i64 = 600_000;
/// Chance, after each impression, that one ad's price changes.
pub const PRICE_CHANGE_SHARE: f64 = 0.01;
/// Prices in units of 0.0001: 0.0100 ..= 9.9999.
pub const PRICE_MIN: u32 = 100;
pub const PRICE_MAX: u32 = 99_999;
/// Every ad holds a price and a last version time in memory, and a first-version line.
pub const MAX_KEYS: u64 = 10_000_000;

/// What `loadgen flow` generates; built from [`LoadgenArgs`] by [`FlowPlan::from_args`].
#[derive(Debug, Clone)]
pub struct FlowPlan {
    pub seed: u64,
    pub impressions: u64,
    pub keys: u64,
    pub start_ms: i64,
    pub out_of_orderness_ms: i64,
    pub late_fraction: f64,
    pub late_by_ms: i64,
    /// Ads and impression times: the click model for these arguments, without late events.
    pub ads: ClickModel,
}

impl FlowPlan {
    pub fn from_args(args: &LoadgenArgs) -> Result<FlowPlan, LoadgenError> {
        let bad = |arg, reason: &str| LoadgenError::InvalidArg {
            arg,
            reason: reason.to_string(),
        };
        if args.kafka.is_some() {
            return Err(bad("kafka", "`flow` writes files only"));
        }
        if args.files != 1 {
            return Err(bad("files", "`flow` writes one file per stream"));
        }
        let mut plan = args.plan()?;
        if plan.keys > MAX_KEYS {
            return Err(bad("keys", &format!("`flow` takes at most {MAX_KEYS} ads")));
        }
        if plan.late_fraction > 0.0 && plan.late_by_ms <= plan.out_of_orderness_ms {
            return Err(bad(
                "late-by-ms",
                "must exceed --out-of-orderness-ms, or a late click would not be late",
            ));
        }
        let late_fraction = plan.late_fraction;
        plan.late_fraction = 0.0;
        Ok(FlowPlan {
            seed: plan.seed,
            impressions: args.events,
            keys: plan.keys,
            start_ms: plan.start_ms,
            out_of_orderness_ms: plan.out_of_orderness_ms,
            late_fraction,
            late_by_ms: plan.late_by_ms,
            ads: ClickModel::new(&plan),
        })
    }
}

/// The three output streams, in the order of [`FlowCounts::lines`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Impressions = 0,
    Clicks = 1,
    Prices = 2,
}

/// What one generation wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowCounts {
    /// Lines per stream: impressions, clicks (duplicates and late ones included), prices.
    pub lines: [u64; 3],
    pub bytes: [u64; 3],
    /// Click lines that are a second copy (exact or retry) of an earlier click.
    pub duplicates: u64,
    /// Click lines written late on purpose.
    pub late: u64,
}

/// Writes the three files into `--out` (created if needed); see the module doc. The report's
/// `events` counts the lines of all three files.
pub fn run(args: &LoadgenArgs) -> Result<LoadgenReport, LoadgenError> {
    let plan = FlowPlan::from_args(args)?;
    let dir = args.out.clone().unwrap_or_default();
    fs::create_dir_all(&dir).map_err(|source| LoadgenError::CreateDir {
        path: dir.clone(),
        source,
    })?;
    let paths = [IMPRESSIONS_FILE, CLICKS_FILE, PRICES_FILE].map(|name| dir.join(name));
    let open = |path: &PathBuf| {
        let file = File::create(path).map_err(|source| LoadgenError::Create {
            path: path.clone(),
            source,
        })?;
        Ok::<_, LoadgenError>(BufWriter::with_capacity(1 << 20, file))
    };
    let [mut imp, mut clk, mut pri] = [open(&paths[0])?, open(&paths[1])?, open(&paths[2])?];
    let started = Instant::now();
    let counts = generate(&plan, &mut imp, &mut clk, &mut pri).map_err(|(stream, source)| {
        LoadgenError::Write {
            path: paths[stream as usize].clone(),
            source,
        }
    })?;
    for (w, path) in [imp, clk, pri].into_iter().zip(&paths) {
        // No fsync: test data need not survive a power cut (as for `loadgen clicks`).
        w.into_inner().map_err(|e| LoadgenError::Write {
            path: path.clone(),
            source: e.into_error(),
        })?;
    }
    Ok(LoadgenReport {
        events: counts.lines.iter().sum(),
        bytes: counts.bytes.iter().sum(),
        seconds: started.elapsed().as_secs_f64(),
        files: paths.to_vec(),
    })
}

/// Generates the streams into the three writers; an error names the stream it happened on.
pub fn generate<W: Write>(
    plan: &FlowPlan,
    impressions: &mut W,
    clicks: &mut W,
    prices: &mut W,
) -> Result<FlowCounts, (Stream, io::Error)> {
    let mut flow = Flow::new(plan);
    let mut outs = [
        Out::new(impressions, Stream::Impressions),
        Out::new(clicks, Stream::Clicks),
        Out::new(prices, Stream::Prices),
    ];
    flow.first_prices(&mut outs[2])?;
    for i in 0..plan.impressions {
        flow.impression(i, &mut outs)?;
    }
    let [_, clicks, prices] = &mut outs;
    flow.flush(clicks, prices, i64::MAX, i64::MAX)?;
    let mut counts = FlowCounts {
        duplicates: flow.duplicates,
        late: flow.late,
        ..FlowCounts::default()
    };
    for (k, out) in outs.iter().enumerate() {
        counts.lines[k] = out.lines;
        counts.bytes[k] = out.bytes;
    }
    Ok(counts)
}

/// One output stream: its writer, a line buffer reused for every line, and what was written.
struct Out<'w, W> {
    w: &'w mut W,
    stream: Stream,
    line: Vec<u8>,
    lines: u64,
    bytes: u64,
}

impl<'w, W: Write> Out<'w, W> {
    fn new(w: &'w mut W, stream: Stream) -> Self {
        Out {
            w,
            stream,
            line: Vec::with_capacity(128),
            lines: 0,
            bytes: 0,
        }
    }

    /// Writes the line built in `self.line` and clears it.
    fn emit(&mut self) -> Result<(), (Stream, io::Error)> {
        self.w.write_all(&self.line).map_err(|e| (self.stream, e))?;
        self.lines += 1;
        self.bytes += self.line.len() as u64;
        self.line.clear();
        Ok(())
    }
}

/// A click line waiting in the heap. Field order makes the derived order (write time, then
/// sequence number): `seq` is unique, so the order is total and the output deterministic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct PendingClick {
    write_at: i64,
    seq: u64,
    ts: i64,
    click_id: u64,
    imp_id: u64,
    ad: u64,
}

/// A price version waiting in the heap; ordered like [`PendingClick`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct PendingPrice {
    write_at: i64,
    seq: u64,
    ts: i64,
    ad: u64,
    price: u32,
}

/// The generator's state between impressions.
struct Flow<'p> {
    plan: &'p FlowPlan,
    /// Draws for clicks, and for prices: separate, so one's draws never shift the other's.
    click_rng: SplitMix,
    price_rng: SplitMix,
    click_threshold: u64,
    late_threshold: u64,
    duplicate_threshold: u64,
    exact_threshold: u64,
    price_threshold: u64,
    /// Jitter of a write time is drawn in `0..jitter_span` (= out_of_orderness_ms + 1).
    jitter_span: u64,
    clicks: BinaryHeap<Reverse<PendingClick>>,
    prices: BinaryHeap<Reverse<PendingPrice>>,
    /// Per ad: its current price and the ts of its newest version.
    price: Vec<u32>,
    last_version: Vec<i64>,
    next_click_id: u64,
    seq: u64,
    duplicates: u64,
    late: u64,
}

impl<'p> Flow<'p> {
    fn new(plan: &'p FlowPlan) -> Flow<'p> {
        let ooo = plan.out_of_orderness_ms.max(0);
        Flow {
            plan,
            click_rng: SplitMix::new(plan.seed, 0xC11C_C11C_C11C_C11C),
            price_rng: SplitMix::new(plan.seed, 0x9A1C_E59A_1CE5_9A1C),
            click_threshold: threshold53(CLICK_SHARE),
            late_threshold: threshold53(plan.late_fraction),
            duplicate_threshold: threshold53(DUPLICATE_SHARE),
            exact_threshold: threshold53(EXACT_DUPLICATE_SHARE),
            price_threshold: threshold53(PRICE_CHANGE_SHARE),
            jitter_span: ooo as u64 + 1,
            clicks: BinaryHeap::new(),
            prices: BinaryHeap::new(),
            price: Vec::new(),
            last_version: Vec::new(),
            next_click_id: 1,
            seq: 0,
            duplicates: 0,
            late: 0,
        }
    }

    fn ooo(&self) -> i64 {
        self.plan.out_of_orderness_ms.max(0)
    }

    /// Every ad's first version, one ms before the earliest time an impression can have.
    fn first_prices<W: Write>(&mut self, out: &mut Out<W>) -> Result<(), (Stream, io::Error)> {
        let ts = self
            .plan
            .start_ms
            .saturating_sub(self.ooo())
            .saturating_sub(1);
        let keys = self.plan.keys as usize;
        self.price = Vec::with_capacity(keys);
        self.last_version = vec![ts; keys];
        for ad in 0..self.plan.keys {
            let p = PRICE_MIN + self.price_rng.below((PRICE_MAX - PRICE_MIN + 1) as u64) as u32;
            self.price.push(p);
            write_price(ad, p, ts, &mut out.line);
            out.emit()?;
        }
        Ok(())
    }

    /// Impression `i`: its line, its click (if any) and a price change (if any) into the heaps,
    /// then every heap entry that no later impression can precede.
    fn impression<W: Write>(
        &mut self,
        i: u64,
        outs: &mut [Out<W>; 3],
    ) -> Result<(), (Stream, io::Error)> {
        let imp = self.plan.ads.click(i);
        let imp_id = i + 1;
        let [imps, clicks, prices] = outs;
        write_impression(imp_id, imp.ad_id, imp.ts, &mut imps.line);
        imps.emit()?;
        // Fixed draw order. Clicks: click?, its delay, late?, jitter, duplicate? (kind, its
        // draws). Prices: change?, its ad, step, jitter.
        if self.click_rng.chance(self.click_threshold) {
            let ts = imp
                .ts
                .saturating_add(self.click_rng.below(CLICK_DELAY_MAX_MS as u64 + 1) as i64);
            self.click(imp_id, imp.ad_id, ts);
        }
        if self.price_rng.chance(self.price_threshold) {
            let slot = self.plan.ads.slot_ms(i);
            self.price_change(slot);
        }
        // A later impression's ts is at least its slot minus the bound, and a click's write time
        // is at least its impression's ts; a price change's write time is at least its slot.
        let next_slot = self.plan.ads.slot_ms(i + 1);
        let ooo = self.ooo();
        self.flush(clicks, prices, next_slot.saturating_sub(ooo), next_slot)
    }

    fn click(&mut self, imp_id: u64, ad: u64, ts: i64) {
        let click_id = self.next_click_id;
        self.next_click_id += 1;
        let ooo = self.ooo();
        if self.click_rng.chance(self.late_threshold) {
            self.late += 1;
            let write_at = ts.saturating_add(self.plan.late_by_ms);
            self.push_click(write_at, ts, click_id, imp_id, ad);
            return;
        }
        let jitter = self.click_rng.below(self.jitter_span) as i64;
        self.push_click(ts.saturating_add(jitter), ts, click_id, imp_id, ad);
        if !self.click_rng.chance(self.duplicate_threshold) {
            return;
        }
        self.duplicates += 1;
        if self.click_rng.chance(self.exact_threshold) {
            // The same line again, no earlier than the original and still within the bound.
            let later = self.click_rng.below((ooo - jitter) as u64 + 1) as i64;
            self.push_click(ts.saturating_add(jitter + later), ts, click_id, imp_id, ad);
        } else {
            // A retry: more than the bound but less than the horizon after the original.
            let low = (ooo + 1).min(DEDUPE_HORIZON_MS - 1);
            let span = (DEDUPE_HORIZON_MS - 1 - low) as u64 + 1;
            let retry_ts = ts.saturating_add(low + self.click_rng.below(span) as i64);
            let jitter = self.click_rng.below(self.jitter_span) as i64;
            self.push_click(
                retry_ts.saturating_add(jitter),
                retry_ts,
                click_id,
                imp_id,
                ad,
            );
        }
    }

    fn push_click(&mut self, write_at: i64, ts: i64, click_id: u64, imp_id: u64, ad: u64) {
        self.seq += 1;
        self.clicks.push(Reverse(PendingClick {
            write_at,
            seq: self.seq,
            ts,
            click_id,
            imp_id,
            ad,
        }));
    }

    /// A new version of a random ad at `slot`, or one ms after its newest version if that is
    /// not earlier, so one ad's versions never share a ts.
    fn price_change(&mut self, slot: i64) {
        let ad = self.price_rng.below(self.plan.keys) as usize;
        let old = self.price[ad];
        let step = (old / 10).max(1);
        let delta = self.price_rng.below(2 * step as u64 + 1) as i64 - step as i64;
        let price = (old as i64 + delta).clamp(PRICE_MIN as i64, PRICE_MAX as i64) as u32;
        let ts = slot.max(self.last_version[ad].saturating_add(1));
        self.price[ad] = price;
        self.last_version[ad] = ts;
        let jitter = self.price_rng.below(self.jitter_span) as i64;
        self.seq += 1;
        self.prices.push(Reverse(PendingPrice {
            write_at: ts.saturating_add(jitter),
            seq: self.seq,
            ts,
            ad: ad as u64,
            price,
        }));
    }

    /// Writes every pending click with write time at most `clicks_until` and every pending
    /// price with write time at most `prices_until`, in (write time, sequence) order.
    fn flush<W: Write>(
        &mut self,
        clicks: &mut Out<W>,
        prices: &mut Out<W>,
        clicks_until: i64,
        prices_until: i64,
    ) -> Result<(), (Stream, io::Error)> {
        while let Some(Reverse(c)) = self.clicks.peek() {
            if c.write_at > clicks_until {
                break;
            }
            write_click(c.click_id, c.imp_id, c.ad, c.ts, &mut clicks.line);
            self.clicks.pop();
            clicks.emit()?;
        }
        while let Some(Reverse(p)) = self.prices.peek() {
            if p.write_at > prices_until {
                break;
            }
            write_price(p.ad, p.price, p.ts, &mut prices.line);
            self.prices.pop();
            prices.emit()?;
        }
        Ok(())
    }
}

/// splitmix64 (the click model uses the same mixer, per index); here one sequential stream,
/// since the flow's heaps make it sequential anyway.
struct SplitMix {
    state: u64,
}

impl SplitMix {
    const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

    /// `salt` tells streams of one seed apart (and from the click model's, which hashes the
    /// seed differently).
    fn new(seed: u64, salt: u64) -> SplitMix {
        SplitMix { state: seed ^ salt }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GOLDEN);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply; bias below n / 2^64).
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }

    /// True with the probability `threshold / 2^53` (see [`threshold53`]).
    fn chance(&mut self, threshold: u64) -> bool {
        (self.next() >> 11) < threshold
    }
}

/// `p` as a threshold on a 53-bit draw: p = 1 gives 2^53, which every draw is below.
fn threshold53(p: f64) -> u64 {
    // `as` saturates and maps NaN to 0.
    (p.clamp(0.0, 1.0) * (1u64 << 53) as f64) as u64
}

#[cfg(test)]
mod tests;
