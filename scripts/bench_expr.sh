#!/usr/bin/env bash
# The cost of filters and selects per event: the same 1-minute tumbling count() + sum(bid) per ad_id
# over EVENTS (default 5 000 000) clicks from an NDJSON file, run RUNS times (default 3) each way —
# reading the source directly (`none`), through a filter of 1 expression, a select of 5 and a
# select of 20 — and the median events/s of each compared with `none`.
#
# Usage: scripts/bench_expr.sh            EVENTS=20000000 RUNS=5 SHARDS=2 scripts/bench_expr.sh
set -euo pipefail

cd "$(dirname "$0")/.."
EVENTS="${EVENTS:-5000000}"
RUNS="${RUNS:-3}"
SHARDS="${SHARDS:-2}"
TARGET="${CARGO_TARGET_DIR:-target}"
DIR=target/bench/expr
DATA="$DIR/clicks-$EVENTS.ndjson"

command -v python3 >/dev/null || { echo "bench_expr.sh needs python3 to read the stats JSON" >&2; exit 1; }
cargo build --release --quiet
mkdir -p "$DIR"
OUT="$DATA" EVENTS="$EVENTS" scripts/gen_data.sh >/dev/null

# write_config NAME WINDOW_INPUT TRANSFORM
write_config() {
    cat > "$DIR/$1.toml" <<TOML
[runtime]
shards = $SHARDS

[sources.clicks]
type = "file"
path = "$DATA"
format = "json"
event_time = { field = "ts", unit = "ms" }
watermark = { max_out_of_orderness = "5s" }
$3
[transforms.per_ad]
type = "window"
inputs = ["$2"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "1m" }
aggregates = { clicks = "count()", spend = "sum(bid)" }

[sinks.counts]
type = "file"
inputs = ["per_ad"]
path = "$DIR/$1.out.ndjson"
TOML
    "$TARGET/release/sluice" validate --config "$DIR/$1.toml" >/dev/null
}
write_config none clicks ""
write_config filter1 kept '
[transforms.kept]
type = "filter"
inputs = ["clicks"]
where = "bid >= 0"
'
write_config select5 shaped '
[transforms.shaped]
type = "select"
inputs = ["clicks"]
fields = { ad_id = "ad_id", bid = "bid", user = "upper(user_id)", cents = "bid * 1.07", big = "bid > 300" }
'
write_config select20 shaped '
[transforms.shaped]
type = "select"
inputs = ["clicks"]
fields = { ad_id = "ad_id", bid = "bid", e1 = "bid * 1.07", e2 = "round(bid * 1.07, 2)", e3 = "bid % 7", e4 = "ts - 1000", e5 = "truncate_time(ts, '"'"'minute'"'"')", e6 = "bid >= 100 && bid < 500", e7 = "coalesce(bid, 0)", e8 = "len(user_id)", e9 = "starts_with(ad_id, '"'"'ad-1'"'"')", e10 = "abs(bid - 250)", e11 = "max(bid, 100)", e12 = "min(bid, 400)", e13 = "bid in [100, 200, 300]", e14 = "lower(ad_id)", e15 = "bid * 2 + 1", e16 = "ts / 1000", e17 = "ad_id == '"'"'ad-7'"'"'", e18 = "bid > 300 ? '"'"'high'"'"' : '"'"'low'"'"'" }
'

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || uname -m)"
echo "job: $EVENTS clicks from $DATA, tumbling 1m count()+sum(bid) by ad_id, $SHARDS shards, $RUNS runs each"
for i in $(seq 1 "$RUNS"); do
    for name in none filter1 select5 select20; do
        "$TARGET/release/sluice" run --config "$DIR/$name.toml" --stats "$DIR/$name.$i.json" 2>"$DIR/$name.$i.log"
    done
done
python3 - "$RUNS" "$DIR" <<'PY'
import json, sys
runs, d = int(sys.argv[1]), sys.argv[2]
def med(name):
    xs = sorted(json.load(open(f"{d}/{name}.{i}.json"))["events_per_second"] for i in range(1, runs + 1))
    return xs[(len(xs) - 1) // 2]
base = med("none")
for name in ("none", "filter1", "select5", "select20"):
    m = med(name)
    print(f"  {name:9} {m / 1e6:6.2f} M events/s  ({100 * (m - base) / base:+.0f}% vs none; "
          f"{1e9 / m:.0f} ns per event, machine-wide)")
PY
