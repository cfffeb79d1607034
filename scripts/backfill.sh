#!/usr/bin/env bash
# Backfill recipe: reprocess a file source from an earlier point into a NEW output, at a rate the
# sink can take, watch it catch up through the metrics endpoint, validate, then cut consumers over.
#
# Usage: scripts/backfill.sh CONFIG START_TIME RATE OUT_DIR
#   CONFIG      the production pipeline (a file source named in it is replayed)
#   START_TIME  RFC 3339, e.g. 2026-11-01T00:00:00Z (records before it are skipped)
#   RATE        records per second, e.g. 50000
#   OUT_DIR     where the backfill writes (never the live outputs)
# Needs python3 (to edit the TOML copy) and curl (to read /metrics). Nothing here touches the live
# job or its outputs.
set -euo pipefail

cd "$(dirname "$0")/.."
CONFIG="$1"; START="$2"; RATE="$3"; OUT="$4"
PORT="${PORT:-9465}"
TARGET="${CARGO_TARGET_DIR:-target}"
mkdir -p "$OUT"
cargo build --release --quiet

# 1. A copy of the pipeline: every file source starts at START and reads at most RATE/s; every
#    output path moves under OUT; its own checkpoints; the endpoint on PORT.
python3 - "$CONFIG" "$START" "$RATE" "$OUT" "$PORT" > "$OUT/backfill.toml" <<'PY'
import re, sys, os
cfg, start, rate, out, port = sys.argv[1:]
text = open(cfg).read()
# Outputs and state go under OUT.
text = re.sub(r'^(path|dir)\s*=\s*"(out|state)/([^"]*)"', lambda m: f'{m.group(1)} = "{out}/{m.group(3)}"', text, flags=re.M)
text = re.sub(r'^\[api\][^\[]*', '', text, flags=re.M)
# Start and rate on every file source.
text = re.sub(r'^(\[sources\.[^\]]+\]\ntype = "file"[^\n]*\n)', lambda m: m.group(1) + f'start_time = "{start}"\nrate_limit = "{rate}/s"\n', text, flags=re.M)
if 'start_time' not in text:
    sys.exit("backfill.sh: no file source found in " + cfg)
print(text)
print(f'\n[api]\naddress = "127.0.0.1:{port}"')
PY
"$TARGET/release/sluice" validate --config "$OUT/backfill.toml"

# 2. Run it and watch it catch up: watermark lag falls as the replay nears the present.
"$TARGET/release/sluice" run --config "$OUT/backfill.toml" --stats "$OUT/stats.json" 2>"$OUT/run.log" &
JOB=$!
trap 'kill $JOB 2>/dev/null || true' EXIT
while kill -0 $JOB 2>/dev/null; do
    sleep 2
    curl -s "127.0.0.1:$PORT/metrics" 2>/dev/null \
        | awk '/^sluice_events_in_total/ {n += $2} /^sluice_watermark_lag_seconds/ {lag = $2} END {if (n) printf "backfill: %d records read, watermark lag %.0f s\n", n, lag}' || true
done
wait $JOB
trap - EXIT

# 3. Validate before cutting over: the run ended cleanly and wrote what its summary says.
tail -n 5 "$OUT/run.log"
python3 - "$OUT/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"backfill done: {s['events']} records, {s['results_emitted']} results, {s['dead_letters']} dead letters, "
      f"{s['records_skipped']} skipped before the start, {s['events_per_second']:.0f} records/s")
PY
echo "Compare $OUT with the live outputs for the overlapping period, then point consumers at $OUT."
