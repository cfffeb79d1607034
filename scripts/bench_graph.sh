#!/usr/bin/env bash
# The dataflow graph from NDJSON files: the contract pipeline (config/ad_spend.toml: dedupe ->
# interval join -> select -> temporal join -> window), the interval join alone (impressions with
# all clicks, 10 s), and a parse-only job over the same files (every record read and parsed, then
# dropped by a filter) as the floor. Inputs: `sluice loadgen flow --events IMPRESSIONS` (default
# 2 000 000 impressions, ~1.26 M clicks, ~21 000 prices). RUNS runs of each (default 5), the three
# jobs alternating; prints each run, the median input events/s and each job's share of the
# parse-only rate, and the peak rows the joins and the dedupe held (from --stats).
#
# Usage: scripts/bench_graph.sh        IMPRESSIONS=500000 SHARDS=2 RUNS=3 scripts/bench_graph.sh
set -euo pipefail

cd "$(dirname "$0")/.."
N="${IMPRESSIONS:-2000000}"
RUNS="${RUNS:-5}"
SHARDS="${SHARDS:-2}"
TARGET="${CARGO_TARGET_DIR:-target}"
DIR="target/bench/graph-$N"
BIN="$TARGET/release/sluice"

cargo build --release --quiet
mkdir -p "$DIR"
if [[ ! -f "$DIR/flow_impressions.ndjson" ]]; then
    "$BIN" loadgen flow --events "$N" --out "$DIR" >/dev/null
fi

# The contract pipeline with this directory's files.
sed -e "s|shards = 2|shards = $SHARDS|" \
    -e "s|data/flow_|$DIR/flow_|" \
    -e "s|out/ad_spend.ndjson|$DIR/ad_spend.out.ndjson|" \
    config/ad_spend.toml > "$DIR/contract.toml"

source_of() { # NAME FILE
    printf '[sources.%s]\ntype = "file"\npath = "%s"\nformat = "json"\nevent_time = { field = "ts", unit = "ms" }\nwatermark = { max_out_of_orderness = "5s" }\n\n' "$1" "$2"
}
{
    printf '[runtime]\nshards = %s\n\n' "$SHARDS"
    source_of impressions "$DIR/flow_impressions.ndjson"
    source_of clicks "$DIR/flow_clicks.ndjson"
    printf '[transforms.matched]\ntype = "interval_join"\nleft = "impressions"\nright = "clicks"\non = ["imp_id"]\nbetween = ["0s", "10s"]\n\n'
    printf '[sinks.out]\ntype = "file"\ninputs = ["matched"]\npath = "%s/interval.out.ndjson"\n' "$DIR"
} > "$DIR/interval.toml"
{
    printf '[runtime]\nshards = %s\n\n' "$SHARDS"
    source_of impressions "$DIR/flow_impressions.ndjson"
    source_of clicks "$DIR/flow_clicks.ndjson"
    source_of ad_prices "$DIR/flow_prices.ndjson"
    printf '[transforms.none]\ntype = "filter"\ninputs = ["impressions", "clicks", "ad_prices"]\nwhere = "false"\n\n'
    printf '[sinks.out]\ntype = "file"\ninputs = ["none"]\npath = "%s/parse.out.ndjson"\n' "$DIR"
} > "$DIR/parse.toml"

declare -A rates
for i in $(seq 1 "$RUNS"); do
    for job in parse interval contract; do
        "$BIN" run --config "$DIR/$job.toml" --stats "$DIR/$job.stats.json" >/dev/null 2>&1
        r=$(python3 -c "import json;print(json.load(open('$DIR/$job.stats.json'))['events_per_second'])")
        rates[$job]+="$r "
        printf 'run %d %-8s %.2f M events/s\n' "$i" "$job" "$(python3 -c "print($r/1e6)")"
    done
done

median() { python3 -c "import sys,statistics;print(statistics.median(map(float,sys.argv[1:])))" $1; }
parse=$(median "${rates[parse]}")
echo
echo "bench_graph: $N impressions, $SHARDS shards, median of $RUNS (input events/s; share of parse-only):"
for job in parse interval contract; do
    m=$(median "${rates[$job]}")
    python3 -c "print(f'  {\"$job\":9s} {$m/1e6:6.2f} M events/s   {$m/$parse:5.2f}x parse-only')"
done
python3 - "$DIR" <<'PY'
import json, sys
d = sys.argv[1]
for job in ("interval", "contract"):
    s = json.load(open(f"{d}/{job}.stats.json"))
    for j in s.get("joins", []):
        print(f"  {job}: {j['name']} peak rows held {j['peak']} (left/input, right/table), state {j['state_bytes']} bytes at exit")
PY
