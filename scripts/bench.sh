#!/usr/bin/env bash
# The headline measurement, reproducible: 1-minute tumbling count + sum(bid) grouped by ad_id over
# 100 000 Zipf-distributed keys (no celebrity key), 5 s watermark bound, results to a file; once from
# data/clicks.ndjson (made by scripts/gen_data.sh) and once from the built-in generator with the
# same model and event count. Each job runs RUNS times (default 3); prints events/s (best, median)
# and the ingestion->emission latency percentiles of the median run, read from `--stats` JSON.
#
# Usage: scripts/bench.sh               SHARDS=4 EVENTS=5000000 RUNS=5 DATA=/tmp/c.ndjson scripts/bench.sh
set -euo pipefail

cd "$(dirname "$0")/.."
SHARDS="${SHARDS:-2}"
EVENTS="${EVENTS:-20000000}"
RUNS="${RUNS:-3}"
TARGET="${CARGO_TARGET_DIR:-target}"
DIR=target/bench
DATA="${DATA:-data/clicks.ndjson}"
export EVENTS

command -v python3 >/dev/null || { echo "bench.sh needs python3 to read the stats JSON" >&2; exit 1; }

cargo build --release --quiet
OUT="$DATA" scripts/gen_data.sh
mkdir -p "$DIR"

# write_config NAME SOURCE_BODY: the pipeline on the given [sources.clicks] body.
write_config() {
    cat > "$DIR/$1.toml" <<TOML
[runtime]
shards = $SHARDS

[sources.clicks]
$2
watermark = { max_out_of_orderness = "5s", idle_timeout = "30s" }

[transforms.clicks_per_minute]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "1m" }
aggregates = { clicks = "count()", spend = "sum(bid)" }

[sinks.counts]
type = "file"
inputs = ["clicks_per_minute"]
path = "$DIR/out.ndjson"
TOML
}

write_config file "type = \"file\"
path = \"$DATA\"
format = \"json\"
event_time = { field = \"ts\", unit = \"ms\" }"
write_config generator "type = \"generator\"
count = $EVENTS"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || uname -m)"
echo "job: tumbling 1m, group_by ad_id, count() + sum(bid), $SHARDS shards, $EVENTS events, $RUNS runs each"
echo "data: $DATA ($(wc -c < "$DATA") bytes)"

for name in file generator; do
    "$TARGET/release/sluice" validate --config "$DIR/$name.toml" >/dev/null
    for i in $(seq 1 "$RUNS"); do
        "$TARGET/release/sluice" run --config "$DIR/$name.toml" --stats "$DIR/$name.$i.json" 2>"$DIR/$name.$i.log"
    done
    python3 - "$name" "$RUNS" "$DIR" <<'PY'
import json, sys
name, runs, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
stats = [json.load(open(f"{d}/{name}.{i}.json")) for i in range(1, runs + 1)]
for i, s in enumerate(stats, 1):
    print(f"  {name} run {i}: {s['events']} events in {s['elapsed_seconds']:.3f} s = "
          f"{s['events_per_second'] / 1e6:.2f} M events/s")
by_rate = sorted(stats, key=lambda s: s["events_per_second"])
med = by_rate[(len(by_rate) - 1) // 2]
best = by_rate[-1]
print(f"{name}: best {best['events_per_second'] / 1e6:.2f} M events/s, "
      f"median {med['events_per_second'] / 1e6:.2f} M events/s; latency (median run) "
      f"p50 {med['latency_p50_us']} us, p99 {med['latency_p99_us']} us, p999 {med['latency_p999_us']} us")
PY
done
