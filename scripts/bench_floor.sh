#!/usr/bin/env bash
# sluice's NDJSON window path against the hand-written floor (../shared/floor, `limits pipeline2`:
# parse + intern + 1-minute tumbling count/sum per ad_id on 2 pinned cores over an SPSC ring), on
# the same file, alternating, RUNS pairs (default 5); prints each pair, both medians and the ratio,
# then (unless NO_GRAPH=1) the interval-join and chained-pipeline figures of scripts/bench_graph.sh.
# The floor is built into target/floor (its own .cargo/config.toml builds it for this CPU); sluice
# is the portable release build.
#
# NATIVE=1 also builds sluice with `-C target-cpu=native` (into target/native) and runs it in each
# pair, to show what a CPU-specific build would add over the portable one.
#
# Usage: scripts/bench_floor.sh [FILE]        RUNS=3 NO_GRAPH=1 NATIVE=1 scripts/bench_floor.sh
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/window_job.sh
root=$(pwd)
RUNS="${RUNS:-5}"
FILE="${1:-target/bench/floor-10M.ndjson}"
FLOOR_SRC="${FLOOR_SRC:-../shared/floor}"
BIN="${CARGO_TARGET_DIR:-target}/release/sluice"

cargo build --release --quiet
NATIVE_BIN=""
if [[ "${NATIVE:-0}" == 1 ]]; then
    RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=target/native cargo build --release --quiet --bin sluice
    NATIVE_BIN=target/native/release/sluice
fi
if [[ ! -d "$FLOOR_SRC" ]]; then
    echo "bench_floor: no floor program at $FLOOR_SRC (set FLOOR_SRC)" >&2
    exit 1
fi
(cd "$FLOOR_SRC" && CARGO_TARGET_DIR="$root/target/floor" cargo build --release --quiet)
LIMITS="$root/target/floor/release/limits"
if [[ ! -f "$FILE" ]]; then
    mkdir -p "$(dirname "$FILE")"
    "$BIN" loadgen clicks --events 10000000 --celebrity-share 0 --out "$FILE" >/dev/null
fi
cat "$FILE" >/dev/null

window_job_toml 2 "$FILE" target/bench/floor.out.ndjson > target/bench/floor.toml

machine_line
rate() {
    "$1" run --config target/bench/floor.toml --stats target/bench/floor.json >/dev/null 2>&1
    python3 -c "import json;print(json.load(open('target/bench/floor.json'))['events_per_second'])"
}
sl=""; fl=""; nl=""
for i in $(seq 1 "$RUNS"); do
    s=$(rate "$BIN")
    f=$("$LIMITS" pipeline2 "$FILE" | awk '/^pipeline2 /{print $2 * 1e6; exit}')
    sl+="$s "; fl+="$f "
    printf 'pair %d: sluice %.2f M events/s, floor pipeline2 %.2f M events/s\n' "$i" \
        "$(python3 -c "print($s/1e6)")" "$(python3 -c "print($f/1e6)")"
    if [[ -n "$NATIVE_BIN" ]]; then
        n=$(rate "$NATIVE_BIN"); nl+="$n "
        printf '        sluice target-cpu=native %.2f M events/s\n' "$(python3 -c "print($n/1e6)")"
    fi
done
python3 - "$sl" "$fl" <<'PY'
import statistics, sys
s, f = (statistics.median(map(float, a.split())) for a in sys.argv[1:3])
print(f"window path, median of {len(sys.argv[1].split())} pairs: sluice {s/1e6:.2f} M events/s, "
      f"floor {f/1e6:.2f} M events/s, ratio {s/f:.3f}")
PY
if [[ -n "$NATIVE_BIN" ]]; then
    python3 - "$sl" "$nl" <<'PY'
import statistics, sys
s, n = (statistics.median(map(float, a.split())) for a in sys.argv[1:3])
print(f"target-cpu=native: {n/1e6:.2f} M events/s, {n/s:.3f}x of the portable build")
PY
fi
if [[ "${NO_GRAPH:-0}" != 1 ]]; then
    RUNS=3 scripts/bench_graph.sh | sed -n '/^bench_graph/,$p'
fi
