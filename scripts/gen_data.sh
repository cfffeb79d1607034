#!/usr/bin/env bash
# Makes the benchmark input: data/clicks.ndjson, EVENTS (default 20 000 000) clicks of the default
# click model (100 000 Zipf-distributed ad ids, no celebrity key, ~70 bytes a line), written by
# `sluice loadgen`. Skips the work when the file already has exactly EVENTS lines.
#
# Usage: scripts/gen_data.sh            (EVENTS=5000000 scripts/gen_data.sh for a smaller file)
set -euo pipefail

cd "$(dirname "$0")/.."
EVENTS="${EVENTS:-20000000}"
OUT="${OUT:-data/clicks.ndjson}"
TARGET="${CARGO_TARGET_DIR:-target}"

if [[ -f "$OUT" ]]; then
    lines=$(wc -l < "$OUT")
    if [[ "$lines" -eq "$EVENTS" ]]; then
        echo "gen_data: $OUT already has $EVENTS events; keeping it."
        exit 0
    fi
    echo "gen_data: $OUT has $lines lines, want $EVENTS; regenerating."
fi

cargo build --release --quiet
"$TARGET/release/sluice" loadgen clicks --events "$EVENTS" --keys 100000 --out "$OUT"
echo "gen_data: wrote $OUT ($(wc -c < "$OUT") bytes)."
