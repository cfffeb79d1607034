#!/usr/bin/env bash
# The single-window NDJSON path against an earlier commit, in alternating runs: the job of
# scripts/bench.sh (1-minute tumbling count + sum(bid) by ad_id over data/clicks.ndjson, 2 shards),
# run by this checkout's binary and by BASE's (default 0a5007c, the commit before the dataflow
# graph, issue 15), one after the other RUNS times (default 5); prints each run, both medians and
# their ratio. BASE is built once in a worktree under target/bench/base-<commit> with its own
# target directory.
#
# Usage: scripts/bench_baseline.sh        BASE=HEAD~3 RUNS=7 EVENTS=10000000 scripts/bench_baseline.sh
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/window_job.sh
BASE="${BASE:-0a5007c}"
RUNS="${RUNS:-5}"
SHARDS="${SHARDS:-2}"
EVENTS="${EVENTS:-20000000}"
DATA="${DATA:-data/clicks.ndjson}"
TARGET="${CARGO_TARGET_DIR:-target}"
DIR=target/bench
export EVENTS

cargo build --release --quiet
OUT="$DATA" scripts/gen_data.sh
base_dir="$DIR/base-$(git rev-parse --short "$BASE")"
if [[ ! -x "$base_dir/target/release/sluice" ]]; then
    rm -rf "$base_dir"
    git worktree prune
    git worktree add --detach "$base_dir" "$BASE" >/dev/null
    (cd "$base_dir" && CARGO_TARGET_DIR=target cargo build --release --quiet)
fi

window_job_toml "$SHARDS" "$DATA" "$DIR/baseline.out.ndjson" > "$DIR/baseline.toml"

machine_line
declare -A rates
for i in $(seq 1 "$RUNS"); do
    for who in base head; do
        bin="$TARGET/release/sluice"
        [[ $who == base ]] && bin="$base_dir/target/release/sluice"
        "$bin" run --config "$DIR/baseline.toml" --stats "$DIR/baseline.$who.json" >/dev/null 2>&1
        r=$(python3 -c "import json;print(json.load(open('$DIR/baseline.$who.json'))['events_per_second'])")
        rates[$who]+="$r "
        printf 'run %d %-4s %.2f M events/s\n' "$i" "$who" "$(python3 -c "print($r/1e6)")"
    done
done
python3 - "$BASE" "${rates[base]}" "${rates[head]}" <<'PY'
import statistics, sys
base, head = (statistics.median(map(float, a.split())) for a in sys.argv[2:4])
print(f"single window, median of {len(sys.argv[2].split())}: {sys.argv[1]} {base / 1e6:.2f} M events/s, "
      f"this checkout {head / 1e6:.2f} M events/s, ratio {head / base:.3f}")
PY
