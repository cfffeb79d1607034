#!/usr/bin/env bash
# Backfill recipe: reprocess the pipeline's sources from an earlier point into NEW outputs, at a
# rate the sinks can take, watch it catch up, compare the new tables with the old ones window by
# window, and print the SQL that cuts readers over. Nothing here touches the live job or its
# outputs.
#
# Usage: scripts/backfill.sh CONFIG START_TIME RATE OUT_DIR
#   CONFIG      the production pipeline; every file and Kafka source is replayed
#   START_TIME  RFC 3339, e.g. 2026-11-01T00:00:00Z (file records before it are skipped; Kafka
#               sources start at that timestamp)
#   RATE        records per second per source, e.g. 50000 (`rate_limit`)
#   OUT_DIR     where the backfill's config, files, state and log go
# Environment:
#   SUFFIX      new tables are `<table><SUFFIX>` (default `_v2`): every postgres sink writes a new
#               table (created), never the live one
#   TARGET_TIME the event time the replay must reach to have caught up (RFC 3339; default: now)
#   PORT        the backfill's metrics endpoint (default 9465)
#   SLUICE_BIN  the binary (default: built with cargo)
# Exit status: 0 when every new table equals its old one over the replayed windows, 2 when the
# comparison lists differences, 1 on any failure.
# Needs python3, curl and psql.
set -euo pipefail

if [[ $# -ne 4 ]]; then
    echo "usage: $0 CONFIG START_TIME RATE OUT_DIR   (e.g. config/job.toml 2026-11-01T00:00:00Z 50000 backfill/)" >&2
    exit 1
fi
# Paths as the caller wrote them, before moving to the repository root.
abs() { python3 -c 'import os, sys; print(os.path.abspath(sys.argv[1]))' "$1"; }
CONFIG=$(abs "$1"); START="$2"; RATE="$3"; OUT=$(abs "$4")
cd "$(dirname "$0")/.."
PORT="${PORT:-9465}"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { echo "backfill: needs Python 3.11 or newer (tomllib)" >&2; exit 1; }
export SUFFIX="${SUFFIX:-_v2}"
mkdir -p "$OUT"
if [[ -z "${SLUICE_BIN:-}" ]]; then
    cargo build --release --quiet
    SLUICE_BIN="${CARGO_TARGET_DIR:-target}/release/sluice"
fi
PSQL=$(command -v psql || ls -d /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -1 || true)
if grep -Eq '^\s*type\s*=\s*"postgres"' "$CONFIG" && [[ -z "$PSQL" ]]; then
    echo "backfill: the config has a postgres sink and psql is not installed (Debian: postgresql-client)" >&2
    exit 1
fi

# 1. A copy of the pipeline: sources start at START and read at most RATE/s; file outputs and
#    state move under OUT; postgres sinks write (and create) `<table>SUFFIX`; the endpoint on PORT.
python3 scripts/lib/backfill_config.py "$CONFIG" "$START" "$RATE" "$OUT" "$PORT" > "$OUT/backfill.toml"
"$SLUICE_BIN" validate --config "$OUT/backfill.toml"

# 2. Run it and report progress: records read, event-time position against the target, rows
#    written per second, and the time left at the current pace.
"$SLUICE_BIN" run --config "$OUT/backfill.toml" --stats "$OUT/stats.json" 2>"$OUT/run.log" &
JOB=$!
trap 'kill $JOB 2>/dev/null || true' EXIT
python3 scripts/lib/backfill_progress.py "$PORT" "$JOB" "$START" "${TARGET_TIME:-}"
if ! wait $JOB; then
    echo "backfill: the run failed; see $OUT/run.log" >&2
    tail -n 5 "$OUT/run.log" >&2
    exit 1
fi
trap - EXIT
python3 - "$OUT/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"backfill: done: {s['events']} records, {s['results_emitted']} results, {s['dead_letters']} dead letters, "
      f"{s['records_skipped']} skipped before the start, {s['events_per_second']:.0f} records/s")
PY

# 3. Compare each new table with the old one per window (row counts and every numeric column's
#    sum), over the windows the backfill covers, and print the cut-over.
status=0
python3 scripts/lib/backfill_compare.py "$OUT/backfill.toml" "$START" "$SUFFIX" "$PSQL" || status=$?
exit $status
