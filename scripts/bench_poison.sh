#!/usr/bin/env bash
# A poison flood against a clean input: the single-window job of scripts/bench.sh over EVENTS
# lines of data/clicks.ndjson (default 10 M), once as they are and once with every 100th line
# replaced by garbage (cycling through cut-off JSON, binary bytes, a missing and a non-numeric
# event time, a bare array), alternating RUNS times (default 3). Prints each run's events/s, dead
# letters and peak RSS, the medians and the poisoned/clean ratio.
#
# Usage: scripts/bench_poison.sh        EVENTS=2000000 RUNS=5 scripts/bench_poison.sh
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/window_job.sh
EVENTS="${EVENTS:-10000000}"
RUNS="${RUNS:-3}"
SHARDS="${SHARDS:-2}"
DIR=target/bench/poison
BIN="${CARGO_TARGET_DIR:-target}/release/sluice"
mkdir -p "$DIR"

cargo build --release --quiet
EVENTS=$((EVENTS > 20000000 ? EVENTS : 20000000)) OUT=data/clicks.ndjson scripts/gen_data.sh >/dev/null
if [[ ! -f "$DIR/clean-$EVENTS.ndjson" ]]; then
    head -n "$EVENTS" data/clicks.ndjson > "$DIR/clean-$EVENTS.ndjson"
    awk 'BEGIN { g[0] = "{\"ts\":17000000,\"ad_id\":\"cut"; g[1] = "\001\002binary\177";
                 g[2] = "{\"ad_id\":\"no-time\",\"bid\":1}"; g[3] = "{\"ts\":\"x\",\"ad_id\":\"a\"}";
                 g[4] = "[1,2,3]" }
         NR % 100 == 0 { print g[(NR / 100) % 5]; next } { print }' \
        "$DIR/clean-$EVENTS.ndjson" > "$DIR/poison-$EVENTS.ndjson"
fi

for kind in clean poison; do
    window_job_toml "$SHARDS" "$DIR/$kind-$EVENTS.ndjson" "$DIR/$kind.out.ndjson" \
        "[dead_letter]
path = \"$DIR/$kind.dead.ndjson\"" > "$DIR/$kind.toml"
done

machine_line
declare -A rates
for i in $(seq 1 "$RUNS"); do
    for kind in clean poison; do
        /usr/bin/time -f "%M" -o "$DIR/$kind.rss" "$BIN" run --config "$DIR/$kind.toml" \
            --stats "$DIR/$kind.json" >/dev/null 2>&1
        read -r r d < <(python3 -c "import json;s=json.load(open('$DIR/$kind.json'));print(s['events_per_second'], s['dead_letters'])")
        rates[$kind]+="$r "
        printf 'run %d %-6s %6.2f M events/s  %8d dead letters  peak RSS %d MB\n' "$i" "$kind" \
            "$(python3 -c "print($r/1e6)")" "$d" "$(( $(cat "$DIR/$kind.rss") / 1024 ))"
    done
done
python3 - "${rates[clean]}" "${rates[poison]}" <<'PY'
import statistics, sys
clean, poison = (statistics.median(map(float, a.split())) for a in sys.argv[1:3])
print(f"median: clean {clean / 1e6:.2f} M events/s, 1% poison {poison / 1e6:.2f} M events/s, ratio {poison / clean:.3f}")
PY
