//! SPSC ring transfer between two threads pinned to cores 0 and 1: elements/s for 128-byte `Event`s
//! (what shards exchange) and for `u64`s (the ring's own overhead), in batches the way the runtime
//! moves them: the producer pushes a batch then `flush`es; the consumer pops up to a batch then
//! `release`s. Capacity 8192, the runtime's default. The consumer checks every index arrived once, in
//! order, so a broken ring fails the bench instead of reporting a number.
//!
//! Run: `cargo bench --bench ring -- --warm-up-time 1 --measurement-time 3`.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sluice::record::event::Event;
use sluice::runtime::ring::{ring, Consumer, Producer};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const CAPACITY: usize = 8192;
/// Elements one criterion iteration transfers.
const PER_ITER: u64 = 1 << 16;
const BATCHES: [usize; 2] = [64, 1024];

/// What travels: built from its index, and gives the index back for the order check.
trait Payload: Copy + Send + 'static {
    const NAME: &'static str;
    fn make(i: u64) -> Self;
    fn index(&self) -> u64;
}

impl Payload for u64 {
    const NAME: &'static str = "u64";
    #[inline]
    fn make(i: u64) -> Self {
        i
    }
    #[inline]
    fn index(&self) -> u64 {
        *self
    }
}

impl Payload for Event {
    const NAME: &'static str = "event_128B";
    #[inline]
    fn make(i: u64) -> Self {
        let mut e = Event::EMPTY;
        e.pos = i;
        e.ts = i as i64;
        e.hash = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        e
    }
    #[inline]
    fn index(&self) -> u64 {
        self.pos
    }
}

/// Pins the calling thread to `cores[i]` if there is such a core; silently unpinned otherwise
/// (the numbers are then less stable, not wrong).
fn pin(cores: &[core_affinity::CoreId], i: usize) {
    if let Some(&c) = cores.get(i) {
        core_affinity::set_for_current(c);
    }
}

fn produce<T: Payload>(mut p: Producer<T>, total: u64, batch: usize) {
    let mut next = 0u64;
    while next < total {
        let end = (next + batch as u64).min(total);
        while next < end {
            match p.push(T::make(next)) {
                Ok(()) => next += 1,
                Err(_) => {
                    // No credit: publish what we have so the consumer can drain, then retry.
                    p.flush();
                    std::hint::spin_loop();
                }
            }
        }
        p.flush();
    }
}

/// Pops `total` values, releasing credit after each batch; panics if any arrives out of order.
fn consume<T: Payload>(mut c: Consumer<T>, total: u64, batch: usize) -> u64 {
    let mut want = 0u64;
    while want < total {
        let mut got = 0;
        while got < batch {
            let Some(v) = c.pop() else { break };
            assert_eq!(v.index(), want, "ring delivered out of order");
            want += 1;
            got += 1;
        }
        c.release();
        if got == 0 {
            std::hint::spin_loop();
        }
    }
    want
}

/// Moves `total` values through a fresh ring between two pinned threads; returns the consumer's
/// time from the common start to the last value.
fn transfer<T: Payload>(
    total: u64,
    batch: usize,
    cores: &Arc<Vec<core_affinity::CoreId>>,
) -> Duration {
    let (p, c) = ring::<T>(CAPACITY);
    let start = Arc::new(Barrier::new(2));
    let (s, cs) = (start.clone(), cores.clone());
    let producer = std::thread::spawn(move || {
        pin(&cs, 0);
        s.wait();
        produce(p, total, batch);
    });
    let cs = cores.clone();
    let consumer = std::thread::spawn(move || {
        pin(&cs, 1);
        start.wait();
        let t0 = Instant::now();
        let n = consume(c, total, batch);
        (t0.elapsed(), n)
    });
    producer.join().expect("producer thread panicked");
    let (elapsed, n) = consumer.join().expect("consumer thread panicked");
    black_box(n);
    elapsed
}

fn bench_type<T: Payload>(c: &mut Criterion, cores: &Arc<Vec<core_affinity::CoreId>>) {
    let mut g = c.benchmark_group(format!("ring_{}", T::NAME));
    g.throughput(Throughput::Elements(PER_ITER));
    for batch in BATCHES {
        g.bench_with_input(BenchmarkId::new("batch", batch), &batch, |b, &batch| {
            b.iter_custom(|iters| transfer::<T>(iters * PER_ITER, batch, cores))
        });
    }
    g.finish();
}

fn bench_ring(c: &mut Criterion) {
    let cores = Arc::new(core_affinity::get_core_ids().unwrap_or_default());
    if cores.len() < 2 {
        eprintln!("ring bench: fewer than 2 cores to pin to; producer and consumer run unpinned.");
    }
    bench_type::<Event>(c, &cores);
    bench_type::<u64>(c, &cores);
}

criterion_group!(benches, bench_ring);
criterion_main!(benches);
