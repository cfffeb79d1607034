//! Hot keys end to end: one ad with 80% of 2 M clicks (the rest Zipf over 100 000 ads), the
//! issue's window (`count()`, `sum(bid)`, `count_distinct(user_id)` per ad per minute) read from
//! an NDJSON file, with `hot_keys` off, salt and auto, on 1 and 2 shards. Each iteration is one
//! whole job timed around `runtime::run`; the first run of each prints its per-shard load
//! max/avg (events processed + combined + partials merged), which criterion cannot show.
//! Set `SLUICE_BENCH_SMALL=1` to divide the input by 10 (a smoke run).
//!
//! Run: `cargo bench --bench hot_keys -- --warm-up-time 1 --measurement-time 5`.
//! The fuller comparison (20 M events, medians, results checked equal): `scripts/bench_hot_keys.sh`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use sluice::cli::{Cli, Command};
use sluice::plan::Plan;
use sluice::runtime::{self, RunOptions};
use std::path::Path;
use std::time::{Duration, Instant};

fn events() -> u64 {
    match std::env::var("SLUICE_BENCH_SMALL") {
        Ok(v) if !v.is_empty() && v != "0" => 200_000,
        _ => 2_000_000,
    }
}

fn job(dir: &Path, data: &Path, shards: usize, mode: &str) -> Plan {
    let out = dir.join(format!("{mode}-{shards}.out.ndjson"));
    let toml = format!(
        r#"[runtime]
shards = {shards}

[sources.clicks]
type = "file"
path = {data:?}
format = "json"
event_time = {{ field = "ts", unit = "ms" }}
watermark = {{ max_out_of_orderness = "5s" }}

[transforms.clicks_per_minute]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = {{ type = "tumbling", size = "1m" }}
aggregates = {{ clicks = "count()", spend = "sum(bid)", users = "count_distinct(user_id)" }}
hot_keys = {{ mode = "{mode}" }}

[sinks.counts]
type = "file"
inputs = ["clicks_per_minute"]
path = {out:?}
"#
    );
    let path = dir.join(format!("{mode}-{shards}.toml"));
    std::fs::write(&path, toml).expect("write bench config");
    sluice::plan::load(&path).unwrap_or_else(|e| panic!("bench config is invalid: {e}"))
}

fn write_clicks(path: &Path, n: u64) {
    let n = n.to_string();
    let args = [
        "sluice",
        "loadgen",
        "clicks",
        "--events",
        &n,
        "--celebrity-share",
        "0.8",
        "--out",
        path.to_str().expect("utf-8 temp path"),
    ];
    let cli = <Cli as clap::Parser>::try_parse_from(args).expect("loadgen arguments parse");
    let Command::Loadgen(a) = cli.command else {
        unreachable!("parsed a loadgen command")
    };
    sluice::loadgen::run(&a).expect("loadgen writes the bench file");
}

fn bench_hot_keys(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let n = events();
    let data = dir.path().join("hot_clicks.ndjson");
    write_clicks(&data, n);
    let mut g = c.benchmark_group("hot_keys_80pct");
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(n));
    for shards in [1, 2] {
        for mode in ["off", "salt", "auto"] {
            let plan = job(dir.path(), &data, shards, mode);
            let summary = runtime::run(&plan, RunOptions::default()).expect("bench job");
            eprintln!(
                "hot_keys {mode} on {shards} shard(s): load max/avg {:.3}",
                summary.load_max_over_avg
            );
            g.bench_function(format!("{mode}/{shards}_shards"), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let t0 = Instant::now();
                        let s = runtime::run(&plan, RunOptions::default()).expect("bench job");
                        total += t0.elapsed();
                        assert_eq!(s.events, n, "the job did not see every input event");
                        black_box(s.results_emitted);
                    }
                    total
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_hot_keys);
criterion_main!(benches);
