#!/usr/bin/env bash
# What start-up costs: the single-window job (scripts/window_job.sh) over an empty file (the whole
# fixed cost: config, plan, thread spawn and pinning, ring allocation, endpoint-less run and exit),
# over the first 1 M and the first 10 M lines of data/clicks.ndjson, alternating RUNS times
# (default 5), medians. The steady-state rate is the 10 M run's marginal rate, 9 M / (T10 - T1);
# the 1 M job's wall time is then compared with 1 M / that rate (issue 21: within 20%).
#
# Usage: scripts/bench_startup.sh        RUNS=9 SHARDS=2 scripts/bench_startup.sh
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/window_job.sh
RUNS="${RUNS:-5}"
SHARDS="${SHARDS:-2}"
DIR=target/bench/startup
BIN="${CARGO_TARGET_DIR:-target}/release/sluice"
mkdir -p "$DIR"
cargo build --release --quiet
EVENTS=20000000 OUT=data/clicks.ndjson scripts/gen_data.sh >/dev/null
[[ -f "$DIR/1m.ndjson" ]] || head -n 1000000 data/clicks.ndjson > "$DIR/1m.ndjson"
[[ -f "$DIR/10m.ndjson" ]] || head -n 10000000 data/clicks.ndjson > "$DIR/10m.ndjson"
: > "$DIR/empty.ndjson"
for n in empty 1m 10m; do
    window_job_toml "$SHARDS" "$DIR/$n.ndjson" "$DIR/out-$n.ndjson" > "$DIR/$n.toml"
done

wall() {
    cat "$DIR/$1.ndjson" > /dev/null  # page cache warm for every run alike
    local t0; t0=$(now)
    "$BIN" run --config "$DIR/$1.toml" 2>/dev/null
    python3 -c "print(f'{$(now) - $t0:.4f}')"
}

machine_line
e=(); a=(); b=()
for r in $(seq "$RUNS"); do
    e+=("$(wall empty)"); a+=("$(wall 1m)"); b+=("$(wall 10m)")
    echo "run $r: empty ${e[-1]} s, 1 M ${a[-1]} s, 10 M ${b[-1]} s"
done
te=$(median "${e[@]}"); t1=$(median "${a[@]}"); t10=$(median "${b[@]}")
python3 - "$te" "$t1" "$t10" <<'PY'
import sys
te, t1, t10 = map(float, sys.argv[1:])
rate = 9e6 / (t10 - t1)
ideal = 1e6 / rate
print(f"steady state {rate / 1e6:.2f} M events/s (marginal, 10 M vs 1 M); fixed cost (empty input) {te * 1e3:.1f} ms")
print(f"1 M-event job: {t1 * 1e3:.1f} ms wall vs {ideal * 1e3:.1f} ms at the steady rate: {t1 / ideal:.2f}x (target <= 1.20x)")
PY
