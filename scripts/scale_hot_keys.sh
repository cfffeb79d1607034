#!/usr/bin/env bash
# Hot keys from 1 to many shards (for a machine with more cores than this VM): the job of
# scripts/bench_hot_keys.sh (one ad with 80% of the clicks; count, sum, count_distinct per ad per
# minute) with hot_keys off, salt and auto on every shard count of SHARDS_LIST, one run each.
# Prints events/s and load max/avg per run and checks that every run wrote the same results.
# Needs only a built binary (no cargo): BIN=path/to/sluice.
#
# Usage: BIN=target/release/sluice SHARDS_LIST="1 2 4 8 16" EVENTS=40000000 RUNS=1 scripts/scale_hot_keys.sh
set -euo pipefail

BIN="${BIN:-target/release/sluice}"
EVENTS="${EVENTS:-40000000}"
LIST="${SHARDS_LIST:-1 2 4 8 16}"
WORK="${WORK:-target/scale-hot-keys}"
STATS="${STATS:-$WORK}"
mkdir -p "$WORK" "$STATS"
source "$(dirname "$0")/lib/hot_keys_job.sh"
DATA="$WORK/hot_clicks.ndjson"
[[ -f "$DATA" ]] || "$BIN" loadgen clicks --events "$EVENTS" --keys 100000 --celebrity-share 0.8 --out "$DATA"

echo "machine: $(nproc) cores; $EVENTS events, 80% on one key"
printf '%-5s %7s %12s %13s %7s\n' mode shards "M events/s" "load max/avg" "idle"
for s in $LIST; do
  for run in $(seq 1 "${RUNS:-1}"); do
    for mode in off salt auto; do
        name="$mode-$s"
        hot_keys_job "$name" "$s" "$mode" "$DATA" "$WORK"
        "$BIN" run --config "$WORK/$name.toml" --stats "$STATS/$name.json" 2>/dev/null
        field() { grep -o "\"$1\": *[0-9.e+-]*" "$STATS/$name.json" | sed 's/.*: *//'; }
        # Idle: the shards' mean share of the run spent with nothing to do (waits included).
        idle=$(field idle_seconds | awk '{ t += $1 } END { print t }')
        awk -v m="$mode" -v s="$s" -v e="$(field events_per_second)" -v l="$(field load_max_over_avg)" \
            -v i="$idle" -v el="$(field elapsed_seconds)" \
            'BEGIN { printf "%-5s %7s %12.2f %13.3f %6.1f%%\n", m, s, e / 1e6, l, 100 * i / (s * el) }'
        sort "$WORK/out-$name.ndjson" > "$WORK/sorted-$name.ndjson"
        rm -f "$WORK/out-$name.ndjson"
    done
  done
done
first=$(ls "$WORK"/sorted-*.ndjson | head -1)
for f in "$WORK"/sorted-*.ndjson; do
    cmp -s "$first" "$f" || { echo "results of $f differ from $first" >&2; exit 1; }
done
echo "results: identical in every run"
