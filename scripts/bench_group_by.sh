#!/usr/bin/env bash
# The group aggregate (a GROUP BY without a window) against the single window on the same clicks:
# EVENTS generated clicks (`loadgen clicks`, USERS users, KEYS Zipf-skewed ads), grouped by
# `user_id` (about USERS keys) and by `ad_id` (KEYS keys), count() and sum(bid), every change
# written to a file as debezium-json (an upsert log); and the 1-minute window of
# scripts/window_job.sh on the same file as the baseline. Prints per job the median input events/s
# of RUNS runs on SHARDS shards, its ratio to the window's, and the group aggregate's peak state
# bytes per key (`--stats` operators' state_bytes_peak over the distinct keys of the file).
#
# Usage: scripts/bench_group_by.sh
#        EVENTS=2000000 RUNS=3 SHARDS=2 scripts/bench_group_by.sh
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/window_job.sh
EVENTS="${EVENTS:-10000000}"
USERS="${USERS:-1000000}"
KEYS="${KEYS:-100000}"
RUNS="${RUNS:-3}"
SHARDS="${SHARDS:-2}"
BIN="${CARGO_TARGET_DIR:-target}/release/sluice"
DIR=target/bench/group_by
mkdir -p "$DIR"

cargo build --release --quiet
DATA="$DIR/clicks-$EVENTS-$USERS-$KEYS.ndjson"
[[ -s "$DATA" ]] || "$BIN" loadgen clicks --events "$EVENTS" --users "$USERS" --keys "$KEYS" --out "$DATA"

# group_job KEY: a group aggregate by KEY over the clicks (no event time needed) into a file.
group_job() {
    cat <<TOML
[runtime]
shards = $SHARDS

[sources.clicks]
type = "file"
path = "$DATA"

[transforms.per_key]
type = "group_aggregate"
inputs = ["clicks"]
group_by = ["$1"]
aggregates = { clicks = "count()", spend = "sum(bid)" }

[sinks.out]
type = "file"
inputs = ["per_key"]
path = "$DIR/out-$1.ndjson"
changelog = "debezium-json"
TOML
}

# run_median CFG: the median events/s of RUNS runs of CFG; the last run's stats in CFG.stats.
run_median() {
    local rates=() r
    for _ in $(seq "$RUNS"); do
        "$BIN" run --config "$1" --stats "$1.stats" >/dev/null 2>"$1.err"
        r=$(python3 -c "import json; print(round(json.load(open('$1.stats'))['events_per_second']))")
        rates+=("$r")
    done
    median "${rates[@]}"
}

machine_line
echo "$EVENTS clicks, $SHARDS shards, median of $RUNS runs"
window_job_toml "$SHARDS" "$DATA" "$DIR/out-window.ndjson" > "$DIR/window.toml"
base=$(run_median "$DIR/window.toml")
echo "| job | events/s | vs the window | distinct keys | peak state bytes | bytes per key |"
echo "|---|---|---|---|---|---|"
echo "| window (1 min tumbling by ad_id) | $base | 1.00x | | | |"
for key in user_id ad_id; do
    group_job "$key" > "$DIR/group-$key.toml"
    rate=$(run_median "$DIR/group-$key.toml")
    keys=$(grep -o "\"$key\":\"[^\"]*\"" "$DATA" | sort -u | wc -l)
    state=$(python3 -c "import json; print(sum(o['state_bytes_peak'] for o in json.load(open('$DIR/group-$key.toml.stats'))['operators']))")
    python3 -c "print(f'| GROUP BY $key | $rate | {$rate / $base:.2f}x | $keys | $state | {$state / $keys:.0f} |')"
done
