//! Window update per event: a tumbling 1-minute `count() + sum(bid)` window operator fed 1 M
//! pre-built click events (100 000 Zipf keys from the default click model, the benchmark's key set),
//! against the bare limit of updating a hashbrown map with the same keys.
//!
//! Events are built as the generator source builds them: key = the JSON token `"ad-123"` with its
//! quotes, `hash = event::hash_key(key)`, value slot 0 = `Int(bid)`. The watermark is advanced the
//! way the runtime does it: before each event it is the largest earlier event time minus the 5 s
//! out-of-orderness bound; events go to the operator in runs of 128 (`on_run`), cut where a
//! watermark step may be due, as the shard's receive loop does. One criterion iteration is one pass over the 1 M events; pass `k`
//! shifts every event time by `k * 10 s` (1 M events at 100 000/s of event time), so the passes
//! continue the generator's stream and windows keep firing (about one per 6 passes) instead of
//! turning late.
//!
//! Run: `cargo bench --bench window -- --warm-up-time 1 --measurement-time 3`.

#[path = "common/mod.rs"]
mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use hashbrown::{HashMap, HashTable};
use sluice::connectors::generator::model::defaults;
use sluice::operators::{Emitter, Operator, Output};
use sluice::record::event::{hash_key, Event, Rec, Value};
use sluice::time::ChunkTime;
use std::time::{Duration, Instant};

const EVENTS: u64 = 1_000_000;
const WINDOW_MS: i64 = 60_000;
const OUT_OF_ORDERNESS_MS: i64 = 5_000;
/// Events per run, as the shard's receive loop hands them over (`runtime::shard`).
const RUN: usize = 128;
/// Event time one pass covers: `EVENTS` at the model's default rate (exact: 1 M / 100 000 per s).
const PASS_MS: i64 = (EVENTS * 1000 / defaults::EVENTS_PER_SECOND) as i64;
/// Passes per minute of event time: how often the bare-limit maps are cleared, as a window fires.
const PASSES_PER_WINDOW: u64 = (WINDOW_MS / PASS_MS) as u64;

/// Counts what the operator emits, so result formatting is not optimised away.
#[derive(Default)]
struct Discard {
    lines: u64,
    bytes: u64,
    late: u64,
}

impl Emitter for Discard {
    fn emit(&mut self, out: Output<'_>) {
        self.lines += 1;
        self.bytes += out.line.len() as u64;
    }
    fn late(&mut self, _rec: &Rec<'_>) {
        self.late += 1;
    }
}

/// The operator, its watermark state and the pass counter, kept across criterion iterations.
struct Driver {
    op: Box<dyn Operator>,
    out: Discard,
    pass: i64,
    seen_max: i64,
    wm: i64,
}

impl Driver {
    fn new() -> Self {
        Driver {
            op: common::tumbling_count_sum(WINDOW_MS),
            out: Discard::default(),
            pass: 0,
            seen_max: i64::MIN,
            wm: i64::MIN,
        }
    }

    /// One pass over `events`, time-shifted to continue the stream, handed over in runs as the
    /// shard's receive loop does.
    fn pass(&mut self, events: &[Event]) {
        let shift = self.pass * PASS_MS;
        self.pass += 1;
        let mut run = Vec::with_capacity(RUN);
        for chunk in events.chunks(RUN) {
            // The one copy: the operator must see time-shifted events.
            run.clear();
            run.extend(chunk.iter().map(|e| {
                let mut e = *e;
                e.ts += shift;
                e.seen_max = self.seen_max;
                self.seen_max = self.seen_max.max(e.ts);
                e
            }));
            // The shard cuts a run where a watermark step may be due; so does this driver.
            let time = ChunkTime::new(i64::MAX, i64::MIN, OUT_OF_ORDERNESS_MS);
            let mut i = 0;
            while i < run.len() {
                let below = time.seen_below(self.op.next_action());
                let n = run[i..]
                    .iter()
                    .position(|e| e.seen_max >= below)
                    .unwrap_or(run.len() - i);
                if n == 0 {
                    let wm = time.before(run[i].seen_max);
                    if wm > self.wm {
                        self.wm = wm;
                        self.op.on_watermark(wm, &mut self.out);
                    }
                    self.op.on_event(&Rec::of(&run[i]), self.wm, &mut self.out);
                    i += 1;
                    continue;
                }
                let n = self.op.on_run(&run[i..i + n], &time, &mut self.out);
                self.wm = self.wm.max(time.before(run[i + n - 1].seen_max));
                i += n;
            }
        }
    }
}

/// Clears a bare-limit map once per minute of event time, as a window fire would.
fn window_boundary(pass: &mut u64) -> bool {
    *pass += 1;
    pass.is_multiple_of(PASSES_PER_WINDOW)
}

fn timed(iters: u64, mut f: impl FnMut()) -> Duration {
    let t0 = Instant::now();
    for _ in 0..iters {
        f();
    }
    t0.elapsed()
}

fn bench_window(c: &mut Criterion) {
    let events = common::click_events(EVENTS);
    let mut g = c.benchmark_group("window_update");
    g.throughput(Throughput::Elements(EVENTS));
    g.sample_size(10);
    // Iterations are long (a whole job / a 1 M-event pass): equal-sized samples, no linear ramp.
    g.sampling_mode(SamplingMode::Flat);

    let mut d = Driver::new();
    g.bench_function("tumbling_1m_count_sum", |b| {
        b.iter_custom(|iters| timed(iters, || d.pass(&events)))
    });
    // Nothing may be late (passes continue the stream within the bound) and windows must have fired.
    assert_eq!(
        d.out.late, 0,
        "window bench fed late events; the time shift is wrong"
    );
    assert!(
        d.out.lines > 0 || d.pass < PASSES_PER_WINDOW as i64 + 1,
        "no window ever fired"
    );
    black_box(d.out.bytes);

    // Bare limits: the same events, key -> (count, sum) and nothing else.
    let mut map: HashMap<Vec<u8>, (u64, i64)> = HashMap::new();
    let mut pass = 0u64;
    g.bench_function("bare_hashmap_vec_key", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                if window_boundary(&mut pass) {
                    map.clear();
                }
                for e in &events {
                    let Value::Int(bid) = e.value(0) else {
                        continue;
                    };
                    let acc = map.entry_ref(e.key()).or_insert((0, 0));
                    acc.0 += 1;
                    acc.1 += bid;
                }
            })
        })
    });
    black_box(map.len());
    drop(map);

    let mut map: HashMap<[u8; 16], (u64, i64)> = HashMap::new();
    let mut pass = 0u64;
    g.bench_function("bare_hashmap_array_key", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                if window_boundary(&mut pass) {
                    map.clear();
                }
                for e in &events {
                    let Value::Int(bid) = e.value(0) else {
                        continue;
                    };
                    let mut k = [0u8; 16];
                    let key = e.key();
                    k[..key.len()].copy_from_slice(key);
                    let acc = map.entry(k).or_insert((0, 0));
                    acc.0 += 1;
                    acc.1 += bid;
                }
            })
        })
    });
    black_box(map.len());
    drop(map);

    // The event already carries its hash: a raw table probed with it, as a keyed-state store can.
    let mut table: HashTable<([u8; 16], u64, i64)> = HashTable::new();
    let mut pass = 0u64;
    g.bench_function("bare_hashtable_prehashed", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                if window_boundary(&mut pass) {
                    table.clear();
                }
                for e in &events {
                    let Value::Int(bid) = e.value(0) else {
                        continue;
                    };
                    let mut k = [0u8; 16];
                    let key = e.key();
                    k[..key.len()].copy_from_slice(key);
                    let entry = table
                        .entry(
                            e.hash,
                            |(kk, _, _)| *kk == k,
                            |(kk, _, _)| hash_key(&kk[..key_len(kk)]),
                        )
                        .or_insert((k, 0, 0));
                    let acc = entry.into_mut();
                    acc.1 += 1;
                    acc.2 += bid;
                }
            })
        })
    });
    black_box(table.len());
    g.finish();
}

/// Length of a zero-padded key (keys are JSON tokens and never contain a 0 byte).
fn key_len(k: &[u8; 16]) -> usize {
    k.iter().position(|&b| b == 0).unwrap_or(k.len())
}

criterion_group!(benches, bench_window);
criterion_main!(benches);
