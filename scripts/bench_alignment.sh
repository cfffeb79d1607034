#!/usr/bin/env bash
# What watermark alignment costs when it never has to pause anything: the headline window job
# (scripts/bench.sh) over the same events split into PARTS files, read without and with
# `max_drift = "1h"` (the files stay within seconds of each other, so nothing pauses and the cost
# is the aligned order itself: a lock per chunk and rounds decided 4 ahead). RUNS runs each,
# interleaved; prints events/s (median) and the ratio.
#
# Usage: scripts/bench_alignment.sh          SHARDS=2 EVENTS=20000000 PARTS=4 RUNS=3 scripts/bench_alignment.sh
set -euo pipefail

cd "$(dirname "$0")/.."
SHARDS="${SHARDS:-2}"
EVENTS="${EVENTS:-20000000}"
PARTS="${PARTS:-4}"
RUNS="${RUNS:-3}"
TARGET="${CARGO_TARGET_DIR:-target}"
DIR=target/bench-alignment
DATA="${DATA:-data/clicks.ndjson}"
export EVENTS

command -v python3 >/dev/null || { echo "bench_alignment.sh needs python3 to read the stats JSON" >&2; exit 1; }
cargo build --release --quiet
OUT="$DATA" scripts/gen_data.sh
mkdir -p "$DIR"
rm -f "$DIR"/part-*
# Round-robin by line: every part covers the whole time range, as partitions of one topic would.
split -n r/"$PARTS" -d "$DATA" "$DIR/part-"

write_config() {
    cat > "$DIR/$1.toml" <<TOML
[runtime]
shards = $SHARDS

[sources.clicks]
type = "file"
path = "$DIR/part-*"
format = "json"
event_time = { field = "ts", unit = "ms" }
watermark = { max_out_of_orderness = "5s"$2 }

[transforms.clicks_per_minute]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "1m" }
aggregates = { clicks = "count()", spend = "sum(bid)" }

[sinks.counts]
type = "file"
inputs = ["clicks_per_minute"]
path = "$DIR/out-$1.ndjson"
TOML
}
write_config fixed ""
write_config drift ', max_drift = "1h"'

echo "machine: $(nproc) cores; $SHARDS shards, $EVENTS events in $PARTS files, $RUNS runs each"
# Interleaved, so a slow spell of the machine hits both alike.
for i in $(seq 1 "$RUNS"); do
    for name in fixed drift; do
        "$TARGET/release/sluice" run --config "$DIR/$name.toml" --stats "$DIR/$name.$i.json" 2>/dev/null
    done
done
cmp -s <(sort "$DIR/out-fixed.ndjson") <(sort "$DIR/out-drift.ndjson") \
    || { echo "results differ between the two orders" >&2; exit 1; }
python3 - "$RUNS" "$DIR" <<'PY'
import json, sys
runs, d = int(sys.argv[1]), sys.argv[2]
def median(name):
    r = sorted(json.load(open(f"{d}/{name}.{i}.json"))["events_per_second"] for i in range(1, runs + 1))
    return r[(len(r) - 1) // 2]
f, a = median("fixed"), median("drift")
print(f"fixed order:   {f / 1e6:.2f} M events/s (median)")
print(f"aligned order: {a / 1e6:.2f} M events/s (median), {a / f:.3f} of fixed")
PY
