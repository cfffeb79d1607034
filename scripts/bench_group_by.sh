#!/usr/bin/env bash
# The group aggregate (a GROUP BY without a window) against the single window on the same clicks:
# EVENTS generated clicks (`loadgen clicks`, USERS users, KEYS Zipf-skewed ads), grouped by
# `user_id` (about USERS keys) and by `ad_id` (KEYS keys), count() and sum(bid), every change
# written to a file as debezium-json (an upsert log); and the 1-minute window of
# scripts/window_job.sh on the same file as the baseline. Prints per job the median input events/s
# of RUNS runs on SHARDS shards, its ratio to the window's, and the group aggregate's peak state
# bytes per key (`--stats` operators' state_bytes_peak over the distinct keys of the file).
#
# With FLINK=1, Apache Flink 2.3 runs the same GROUP BY in SQL on the same file (PyFlink
# mini-cluster, scripts/parity/flink_run.py, parallelism SHARDS, one run; its seconds include the
# mini-cluster's start-up), its debezium-json changelog is compared with sluice's after
# materialising both (scripts/parity/compare.py), and the table gets Flink's events/s and the
# ratio per core (both on SHARDS cores).
#
# Usage: scripts/bench_group_by.sh
#        EVENTS=2000000 RUNS=3 SHARDS=2 FLINK=1 scripts/bench_group_by.sh
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

# flink_job KEY: the same GROUP BY in Flink SQL, into out/flink-KEY as debezium-json.
flink_job() {
    cat <<SQL
SET 'parallelism.default' = '$SHARDS';
CREATE TABLE clicks (ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '$(pwd)/$DATA', 'format' = 'json');
CREATE TABLE per_key ($1 STRING, clicks BIGINT, spend BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '$(pwd)/$DIR/flink-$1', 'format' = 'debezium-json');
INSERT INTO per_key SELECT $1, COUNT(*), SUM(bid) FROM clicks GROUP BY $1;
SQL
}

# flink_columns KEY: "| Flink events/s | sluice / Flink | same result |" for GROUP BY KEY, whose
# sluice output is out-KEY.ndjson.
flink_columns() {
    local secs same=no
    rm -rf "$DIR/flink-$1" "$DIR/sluice-$1" && mkdir -p "$DIR/sluice-$1"
    flink_job "$1" > "$DIR/flink-$1.sql"
    secs=$(TZ=UTC target/flink/venv/bin/python scripts/parity/flink_run.py "$(pwd)/$DIR/flink-$1.sql" 2> "$DIR/flink-$1.log" | tail -1)
    ln -f "$DIR/out-$1.ndjson" "$DIR/sluice-$1/out.ndjson"
    python3 scripts/parity/compare.py "GROUP BY $1" "$DIR/flink-$1" "$DIR/sluice-$1" "$secs" 0 "$EVENTS" \
        > "$DIR/compare-$1.txt" 2>&1 && same=yes
    python3 -c "r = $EVENTS / $secs; print(f'{r:.0f} | {$2 / r:.1f}x | $same |', end='')"
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
FLINK="${FLINK:-0}"
if [ "$FLINK" = 1 ] && [ ! -x target/flink/venv/bin/python ]; then
    python3 -m venv target/flink/venv
    target/flink/venv/bin/pip install --quiet "apache-flink==2.3.0"
fi
extra="" rule=""
[ "$FLINK" = 1 ] && extra=" Flink events/s (p=$SHARDS) | sluice / Flink | same result |" rule="---|---|---|"
echo "| job | events/s | vs the window | distinct keys | peak state bytes | bytes per key |$extra"
echo "|---|---|---|---|---|---|$rule"
echo "| window (1 min tumbling by ad_id) | $base | 1.00x | | | |$( [ "$FLINK" = 1 ] && echo " | | |")"
for key in user_id ad_id; do
    group_job "$key" > "$DIR/group-$key.toml"
    rate=$(run_median "$DIR/group-$key.toml")
    keys=$(grep -o "\"$key\":\"[^\"]*\"" "$DATA" | sort -u | wc -l)
    state=$(python3 -c "import json; print(sum(o['state_bytes_peak'] for o in json.load(open('$DIR/group-$key.toml.stats'))['operators']))")
    flink=""
    [ "$FLINK" = 1 ] && flink=" $(flink_columns "$key" "$rate")"
    python3 -c "print(f'| GROUP BY $key | $rate | {$rate / $base:.2f}x | $keys | $state | {$state / $keys:.0f} |$flink')"
done
