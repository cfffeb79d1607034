#!/usr/bin/env bash
# Events/s from Kafka into the headline window job (1-minute tumbling count + sum(bid) by ad_id,
# 5 s bound) and back into Kafka, with both delivery modes, against the same events from a file
# into a file. Starts the local broker (scripts/kafka-local.sh), produces EVENTS generated clicks
# into a PARTS-partition topic with `sluice loadgen --kafka`, runs each job RUNS times
# (interleaved; bounded jobs: stop_at = "end") and prints the median events/s of each.
#
# Usage: scripts/bench_kafka.sh          SHARDS=2 EVENTS=2000000 PARTS=4 RUNS=3 scripts/bench_kafka.sh
set -euo pipefail

cd "$(dirname "$0")/.."
SHARDS="${SHARDS:-2}"
EVENTS="${EVENTS:-2000000}"
PARTS="${PARTS:-4}"
RUNS="${RUNS:-3}"
TARGET="${CARGO_TARGET_DIR:-target}"
DIR=target/bench-kafka
BIN="$TARGET/release/sluice"
PORT="${SLUICE_KAFKA_PORT:-9092}"
BROKERS="127.0.0.1:$PORT"

command -v python3 >/dev/null || { echo "bench_kafka.sh needs python3 to read the stats JSON" >&2; exit 1; }
cargo build --release --quiet
bash scripts/kafka-local.sh start
rm -rf "$DIR" && mkdir -p "$DIR"
TAG="$(date +%s)"
IN="bench-in-$TAG"
bash scripts/kafka-local.sh topic "$IN" "$PARTS"
echo "producing $EVENTS events into $IN ($PARTS partitions)"
"$BIN" loadgen clicks --events "$EVENTS" --kafka "$BROKERS" --topic "$IN"
"$BIN" loadgen clicks --events "$EVENTS" --out "$DIR/clicks.ndjson" 2>/dev/null

# write_config NAME SOURCE SINK [EXTRA]
write_config() {
    cat > "$DIR/$1.toml" <<TOML
[runtime]
shards = $SHARDS

[sources.clicks]
$2
event_time = { field = "ts", unit = "ms" }
watermark = { max_out_of_orderness = "5s" }

[transforms.cpm]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "1m" }
aggregates = { clicks = "count()", spend = "sum(bid)" }

[sinks.out]
inputs = ["cpm"]
$3
${4:-}
TOML
}
kafka_source="type = \"kafka\"
brokers = \"$BROKERS\"
topic = \"$IN\"
start = \"earliest\"
stop_at = \"end\""
file_source="type = \"file\"
path = \"$DIR/clicks.ndjson\""

for i in $(seq 1 "$RUNS"); do
    for mode in alo eo; do
        OUT="bench-out-$mode-$TAG-$i"
        bash scripts/kafka-local.sh topic "$OUT" "$PARTS"
        delivery=$([ "$mode" = eo ] && echo exactly_once || echo at_least_once)
        extra=""
        if [ "$mode" = eo ]; then
            extra="[checkpoint]
dir = \"$DIR/state-$i\"
interval = \"1s\""
        fi
        write_config "$mode" "$kafka_source" "type = \"kafka\"
brokers = \"$BROKERS\"
topic = \"$OUT\"
key = [\"ad_id\", \"window_start\"]
delivery = \"$delivery\"" "$extra"
        "$BIN" run --config "$DIR/$mode.toml" --stats "$DIR/$mode.$i.json" 2>/dev/null
    done
    write_config fil "$file_source" "type = \"file\"
path = \"$DIR/out-file.ndjson\""
    "$BIN" run --config "$DIR/fil.toml" --stats "$DIR/fil.$i.json" 2>/dev/null
done

echo "machine: $(nproc) cores; $SHARDS shards, $EVENTS events, $PARTS partitions, $RUNS runs each"
python3 - "$RUNS" "$DIR" <<'PY'
import json, sys
runs, d = int(sys.argv[1]), sys.argv[2]
def median(name):
    r = sorted(json.load(open(f"{d}/{name}.{i}.json"))["events_per_second"] for i in range(1, runs + 1))
    return r[(len(r) - 1) // 2]
f, a, e = median("fil"), median("alo"), median("eo")
print(f"file -> file:                    {f / 1e6:.2f} M events/s (median)")
print(f"kafka -> kafka, at_least_once:   {a / 1e6:.2f} M events/s ({a / f:.2f} of file)")
print(f"kafka -> kafka, exactly_once:    {e / 1e6:.2f} M events/s ({e / f:.2f} of file; checkpoint every 1 s)")
PY
