//! Checkpoint cost: how long a shard pauses to encode its state at a barrier, and how fast the
//! checkpoint writer makes it durable (snapshot file through memmap2, msync, fsync), for a window
//! operator holding about `STATE_MB` of state (default 1024: 1 GB; `STATE_MB=256 cargo bench ...`
//! for a quicker look).
//!
//! The state is a tumbling 1-minute `count() + sum(bid)` window over distinct `ad-<i>` keys, all in
//! one open window, as a shard holds it before the window fires. One criterion iteration of
//! `encode` is one full snapshot of the operator into the buffer the previous checkpoint used (the
//! shard's pause in steady state; the first, into a fresh buffer, is printed once); one iteration of
//! `write` is one snapshot file written and flushed (the writer's work, off the event path).
//! Throughput is reported in bytes of snapshot, so criterion prints MB/s.
//!
//! Run: `cargo bench --bench checkpoint` (about a minute at 1 GB; needs 3x the state in free memory
//! and the state's size free in the target dir).

#[path = "common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sluice::checkpoint::codec::Enc;
use sluice::checkpoint::{write_snapshot, Section, Snapshot};
use sluice::operators::{Emitter, Operator};
use sluice::record::event::{hash_key, Event, Value};
use std::time::Duration;

struct Discard;
impl Emitter for Discard {
    fn emit(&mut self, _out: sluice::operators::Output<'_>) {}
    fn late(&mut self, _rec: &sluice::record::event::Rec<'_>) {}
}

/// An operator with `keys` distinct keys in one open window.
fn filled(keys: u64) -> Box<dyn Operator> {
    let mut op = common::tumbling_count_sum(60_000);
    let mut ev = Event::EMPTY;
    for i in 0..keys {
        let key = format!("\"ad-{i}\"");
        ev.set_key(key.as_bytes());
        ev.hash = hash_key(key.as_bytes());
        ev.ts = 1_700_000_000_000 + (i % 50_000) as i64;
        ev.set_value(0, Value::Int(100 + (i % 7) as i64));
        op.on_event(&sluice::record::event::Rec::of(&ev), i64::MIN, &mut Discard);
    }
    op
}

fn bench(c: &mut Criterion) {
    let target_mb: u64 = std::env::var("STATE_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    // Measure one key's encoded size, then fill to the target.
    let mut probe = Enc::default();
    filled(10_000).snapshot(&mut probe);
    let per_key = probe.bytes.len() as u64 / 10_000;
    let keys = target_mb * 1_000_000 / per_key.max(1);
    let op = filled(keys);
    let mut e = Enc::default();
    let cold = std::time::Instant::now();
    op.snapshot(&mut e);
    let cold = cold.elapsed();
    let bytes = e.bytes.len() as u64;
    eprintln!(
        "state: {keys} keys, {:.0} MB encoded ({per_key} bytes per key); first encode (fresh \
         buffer, page faults included) {:.1} ms",
        bytes as f64 / 1e6,
        cold.as_secs_f64() * 1e3
    );

    let mut g = c.benchmark_group("checkpoint");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Bytes(bytes));
    // As a shard does from its second checkpoint on: into the buffer the writer handed back.
    let mut reused = Enc {
        bytes: Vec::with_capacity(e.bytes.len()),
    };
    g.bench_function(format!("encode_{target_mb}MB"), |b| {
        b.iter(|| {
            reused.bytes.clear();
            op.snapshot(&mut reused);
            reused.bytes.len()
        })
    });
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let snap = Snapshot {
        shard: 0,
        key_groups: (0, 720),
        sections: vec![Section {
            name: "op/clicks_per_minute".into(),
            bytes: e.bytes,
        }],
    };
    let mut n = 0u64;
    g.bench_function(format!("write_{target_mb}MB"), |b| {
        b.iter(|| {
            n += 1;
            let p = dir.path().join(format!("shard-{n}.snap"));
            let r = write_snapshot(&p, &snap).expect("write snapshot");
            let _ = std::fs::remove_file(&p);
            r
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
