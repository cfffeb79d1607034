#!/usr/bin/env bash
# Hot keys: one ad with 80% of the clicks (the rest Zipf over 100 000 ads), the issue's window
# (count, sum(bid), count_distinct(user_id) per ad per minute) with hot_keys off, salt and auto,
# on 1 and SHARDS shards. RUNS runs of each, interleaved. Prints the median events/s, the
# per-shard load max/avg (events processed + combined + partials merged), the speed-up of SHARDS
# shards over 1, and checks that every mode wrote the same results. JOB=group runs the same
# aggregates per ad without a window (a group aggregate, its changelog as debezium-json), whose
# results are compared after materialising each changelog (combining folds updates, so the
# changelogs themselves differ).
#
# Usage: scripts/bench_hot_keys.sh          SHARDS=2 EVENTS=20000000 RUNS=3 scripts/bench_hot_keys.sh
#        JOB=group scripts/bench_hot_keys.sh
set -euo pipefail

cd "$(dirname "$0")/.."
SHARDS="${SHARDS:-2}"
EVENTS="${EVENTS:-20000000}"
RUNS="${RUNS:-3}"
SHARE="${SHARE:-0.8}"
TARGET="${CARGO_TARGET_DIR:-target}"
JOB="${JOB:-window}"
DIR="target/bench-hot-keys-$JOB"
DATA="${DATA:-data/hot_clicks.ndjson}"

command -v python3 >/dev/null || { echo "bench_hot_keys.sh needs python3 to read the stats JSON" >&2; exit 1; }
cargo build --release --quiet
mkdir -p "$DIR" "$(dirname "$DATA")"
if [[ ! -f "$DATA" || "$(wc -l < "$DATA")" -ne "$EVENTS" ]]; then
    "$TARGET/release/sluice" loadgen clicks --events "$EVENTS" --keys 100000 \
        --celebrity-share "$SHARE" --out "$DATA"
fi

source scripts/lib/hot_keys_job.sh
NAMES=()
for s in 1 "$SHARDS"; do
    hot_keys_job "off-$s" "$s" off "$DATA" "$DIR"
    hot_keys_job "salt-$s" "$s" salt "$DATA" "$DIR"
    hot_keys_job "auto-$s" "$s" auto "$DATA" "$DIR"
    NAMES+=("off-$s" "salt-$s" "auto-$s")
done

echo "machine: $(nproc) cores; job: $JOB; $EVENTS events, $SHARE on one key; 1 and $SHARDS shards; $RUNS runs each"
for i in $(seq 1 "$RUNS"); do
    for name in "${NAMES[@]}"; do
        "$TARGET/release/sluice" run --config "$DIR/$name.toml" --stats "$DIR/$name.$i.json" 2>/dev/null
    done
done
# The rows a debezium-json changelog leaves (each `c` adds its row, each `d` takes one back).
materialised() {
    python3 - "$1" <<'PY'
import collections, json, sys
rows = collections.Counter()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["op"] == "d":
        rows[json.dumps(r["before"], sort_keys=True)] -= 1
    else:
        rows[json.dumps(r["after"], sort_keys=True)] += 1
for row, n in sorted(rows.items()):
    if n:
        print(n, row)
PY
}
for name in "${NAMES[@]}"; do
    if [ "$JOB" = group ]; then
        cmp -s <(materialised "$DIR/out-off-1.ndjson") <(materialised "$DIR/out-$name.ndjson")
    else
        cmp -s <(sort "$DIR/out-off-1.ndjson") <(sort "$DIR/out-$name.ndjson")
    fi || { echo "results of $name differ from off on 1 shard" >&2; exit 1; }
done
python3 - "$RUNS" "$DIR" "$SHARDS" <<'PY'
import json, sys
runs, d, n = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def runs_of(name):
    return [json.load(open(f"{d}/{name}.{i}.json")) for i in range(1, runs + 1)]
def median(v):
    v = sorted(v)
    return v[(len(v) - 1) // 2]
print(f"{'mode':6} {'1 shard':>14} {n + ' shards':>14} {'speed-up':>9} {'load max/avg':>13}")
for mode in ["off", "salt", "auto"]:
    one = median(r["events_per_second"] for r in runs_of(f"{mode}-1"))
    many = runs_of(f"{mode}-{n}")
    m = median(r["events_per_second"] for r in many)
    load = median(r["load_max_over_avg"] for r in many)
    print(f"{mode:6} {one / 1e6:10.2f} M/s {m / 1e6:10.2f} M/s {m / one:8.2f}x {load:13.3f}")
print("results: identical in every mode and shard count")
PY
