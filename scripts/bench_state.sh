#!/usr/bin/env bash
# Join and dedupe state is bounded by the watermark, not by the input's length: the contract
# pipeline (config/ad_spend.toml) on `loadgen flow` inputs of N and 4N impressions (200 s and 800 s
# of event time at the default 10 000/s), with two changes that make the bound reachable in such
# runs: the dedupe horizon is 1 min instead of 10 min (a 10 min horizon remembers every click of a
# run shorter than 10 min), and every source sets `watermark.max_drift = "5s"`, so the files are
# read in step by event time (without it the clicks file, smaller per second of event time than the
# impressions file, runs ahead when both are read at the same byte rate, and the join holds the
# clicks it is ahead by: state bounded by the drift, which grows with the run). Chunks are 256 KiB:
# alignment decides a round from chunks 4 rounds back, so a partition can run up to 4 chunks ahead
# (a constant, but at 1 MiB per chunk most of the 4N prices file, which would hide the bound).
#
# Prints, per operator and run, the peak rows held (from --stats) and `state_bytes` at exit (row
# pages, key tables and per-row entries; none of them shrink, so this is the high-water mark), and
# the 4N/N ratio of each. Usage: scripts/bench_state.sh        IMPRESSIONS=500000 scripts/bench_state.sh
set -euo pipefail

cd "$(dirname "$0")/.."
N="${IMPRESSIONS:-2000000}"
TARGET="${CARGO_TARGET_DIR:-target}"
BIN="$TARGET/release/sluice"
cargo build --release --quiet

for n in "$N" "$((4 * N))"; do
    dir="target/bench/graph-$n"
    mkdir -p "$dir"
    if [[ ! -f "$dir/flow_impressions.ndjson" ]]; then
        "$BIN" loadgen flow --events "$n" --out "$dir" >/dev/null
    fi
    sed -e "s|data/flow_|$dir/flow_|" \
        -e 's|^shards = 2$|shards = 2\nchunk_bytes = 262144|' \
        -e "s|out/ad_spend.ndjson|$dir/state.out.ndjson|" \
        -e 's|horizon = "10m"|horizon = "1m"|' \
        -e 's|idle_timeout = "30s" }|idle_timeout = "30s", max_drift = "5s" }|' \
        config/ad_spend.toml > "$dir/state.toml"
    "$BIN" run --config "$dir/state.toml" --stats "$dir/state.stats.json" >/dev/null 2>&1
done

python3 - "$N" <<'PY'
import json, sys
n = int(sys.argv[1])
runs = [json.load(open(f"target/bench/graph-{m}/state.stats.json")) for m in (n, 4 * n)]
print(f"bench_state: contract pipeline (horizon 1m, max_drift 5s, 256 KiB chunks), {n} vs {4 * n} impressions, 2 shards")
for a, b in zip(runs[0]["joins"], runs[1]["joins"]):
    ratio = b["state_bytes"] / max(a["state_bytes"], 1)
    print(f"  {a['name']:14s} peak rows {a['peak']} -> {b['peak']}, "
          f"state {a['state_bytes'] / 1e6:.1f} MB -> {b['state_bytes'] / 1e6:.1f} MB ({ratio:.2f}x)")
for r, m in zip(runs, (n, 4 * n)):
    print(f"  {m} impressions: {r['events']} events, {r['events_per_second'] / 1e6:.2f} M events/s")
PY
