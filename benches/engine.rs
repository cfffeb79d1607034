//! End-to-end events/s through `runtime::run` with 2 shards on the benchmark pipeline: tumbling
//! 1-minute windows grouped by `ad_id`, `count()` and `sum(bid)`, 5 s out-of-orderness, results to
//! a file. Three inputs, all the default click model (100 000 Zipf keys, no celebrity key):
//! - `generator`: the in-process generator source, bounded to 2 M events;
//! - `ndjson_file`: a 2 M-line file written once by `sluice loadgen` into a temp dir (~70-byte
//!   lines; read from the page cache after warm-up);
//! - `memory`: 20 M pre-parsed events handed in as an in-memory source (`connectors::memory`) (16 384 per chunk),
//!   so the number is the engine without any parser.
//!
//! Each iteration is one whole job (threads started, input read, every window fired, sink flushed),
//! timed around `runtime::run`; the job's own event count is checked against the input.
//! Set `SLUICE_BENCH_SMALL=1` to divide every input by 10 (a smoke run).
//!
//! Run: `cargo bench --bench engine -- --warm-up-time 1 --measurement-time 5`.

#[path = "common/mod.rs"]
mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use sluice::cli::{Cli, Command};
use sluice::connectors::memory::MemorySource;
use sluice::connectors::source::OpenSource;
use sluice::plan::Plan;
use sluice::runtime::{self, RunOptions};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const GENERATOR_EVENTS: u64 = 2_000_000;
const FILE_EVENTS: u64 = 2_000_000;
const MEMORY_EVENTS: u64 = 20_000_000;
const MEMORY_PER_CHUNK: u64 = 16_384;
const SHARDS: usize = 2;

fn scaled(n: u64) -> u64 {
    match std::env::var("SLUICE_BENCH_SMALL") {
        Ok(v) if !v.is_empty() && v != "0" => n / 10,
        _ => n,
    }
}

/// The benchmark job on `source` (the body of `[sources.clicks]` minus its watermark), results to
/// `out`, validated through the same loader as `sluice run`.
fn job(dir: &Path, name: &str, source: &str) -> Plan {
    let out = dir.join(format!("{name}.out.ndjson"));
    let toml = format!(
        r#"[runtime]
shards = {SHARDS}

[sources.clicks]
{source}
watermark = {{ max_out_of_orderness = "5s", idle_timeout = "30s" }}

[transforms.clicks_per_minute]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = {{ type = "tumbling", size = "1m" }}
aggregates = {{ clicks = "count()", spend = "sum(bid)" }}

[sinks.counts]
type = "file"
inputs = ["clicks_per_minute"]
path = {out:?}
"#
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).expect("write bench config");
    sluice::plan::load(&path).unwrap_or_else(|e| panic!("bench config {name} is invalid: {e}"))
}

/// Writes `events` clicks with `sluice loadgen clicks` (same code path as the CLI).
fn write_clicks(path: &Path, events: u64) {
    let args = [
        "sluice",
        "loadgen",
        "clicks",
        "--events",
        &events.to_string(),
        "--out",
    ];
    let cli = <Cli as clap::Parser>::try_parse_from(
        args.iter()
            .copied()
            .chain([path.to_str().expect("utf-8 temp path")]),
    )
    .expect("loadgen arguments parse");
    let Command::Loadgen(a) = cli.command else {
        unreachable!("parsed a loadgen command")
    };
    sluice::loadgen::run(&a).expect("loadgen writes the bench file");
}

/// Runs the job `iters` times; returns the total wall time of the `runtime::run` calls.
fn run_jobs(
    plan: &Plan,
    iters: u64,
    want: u64,
    sources: impl Fn() -> Option<Vec<Arc<dyn OpenSource>>>,
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let opts = RunOptions {
            sources: sources(),
            ..RunOptions::default()
        };
        let t0 = Instant::now();
        let summary = runtime::run(plan, opts).unwrap_or_else(|e| panic!("bench job failed: {e}"));
        total += t0.elapsed();
        assert_eq!(
            summary.events, want,
            "the job did not see every input event"
        );
        black_box(summary.results_emitted);
    }
    total
}

fn bench_engine(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut g = c.benchmark_group("engine_2_shards");
    g.sample_size(10);
    // Iterations are long (a whole job / a 1 M-event pass): equal-sized samples, no linear ramp.
    g.sampling_mode(SamplingMode::Flat);

    let n = scaled(GENERATOR_EVENTS);
    let plan = job(
        dir.path(),
        "generator",
        &format!("type = \"generator\"\ncount = {n}"),
    );
    g.throughput(Throughput::Elements(n));
    g.bench_function("generator", |b| {
        b.iter_custom(|iters| run_jobs(&plan, iters, n, || None))
    });

    let n = scaled(FILE_EVENTS);
    let data = dir.path().join("clicks.ndjson");
    write_clicks(&data, n);
    let source = format!(
        "type = \"file\"\npath = {:?}\nformat = \"json\"\nevent_time = {{ field = \"ts\", unit = \"ms\" }}",
        data.to_str().expect("utf-8 temp path")
    );
    let plan = job(dir.path(), "file", &source);
    g.throughput(Throughput::Elements(n));
    g.bench_function("ndjson_file", |b| {
        b.iter_custom(|iters| run_jobs(&plan, iters, n, || None))
    });
    let _ = std::fs::remove_file(&data);

    let n = scaled(MEMORY_EVENTS);
    let events: Arc<[sluice::record::event::Event]> = common::click_events(n).into();
    // The generator source only names the stream; its partitions are replaced by the events.
    let plan = job(dir.path(), "memory", "type = \"generator\"\ncount = 1");
    let parts = || {
        // Its partition's watermark bound is the plan source's (5 s).
        let memory: Arc<dyn OpenSource> = Arc::new(MemorySource::new(
            "memory",
            events.clone(),
            MEMORY_PER_CHUNK,
        ));
        Some(vec![memory])
    };
    g.throughput(Throughput::Elements(n));
    g.bench_function("memory", |b| {
        b.iter_custom(|iters| run_jobs(&plan, iters, n, parts))
    });
    g.finish();
}

criterion_group!(benches, bench_engine);
criterion_main!(benches);
