#!/usr/bin/env bash
# Two builds of sluice side by side on the workloads a change to the engine must not slow down:
# the single-window NDJSON job (scripts/window_job.sh, EVENTS clicks), the contract ad-spend
# pipeline (config/ad_spend.toml on `loadgen flow --events IMPRESSIONS` files), the interval join
# alone (impressions with all clicks within 10 s), and Nexmark q0, q5 and q7 (benches/nexmark, on
# `loadgen nexmark --events NEXMARK` files). BASE's binary (built once in a worktree under
# target/bench/base-<commit>, like scripts/bench_baseline.sh; or BASE_BIN, a binary given as it is)
# and this checkout's run alternately, RUNS times each (default 5), 2 shards. Prints each run,
# then per workload the median wall seconds and CPU seconds (user + sys) of both and their ratios
# (this checkout over BASE: below 1 is faster); and checks both give the same rows.
#
# Usage: BASE=main~3 scripts/bench_compare.sh
#        BASE_BIN=/tmp/old/sluice RUNS=7 EVENTS=5000000 WORKLOADS="window contract" scripts/bench_compare.sh
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/window_job.sh
RUNS="${RUNS:-5}"
SHARDS="${SHARDS:-2}"
EVENTS="${EVENTS:-10000000}"
IMPRESSIONS="${IMPRESSIONS:-2000000}"
NEXMARK="${NEXMARK:-2000000}"
WORKLOADS="${WORKLOADS:-window contract interval q0 q5 q7}"
TARGET="${CARGO_TARGET_DIR:-target}"
DIR=target/bench/compare
HEAD_BIN="$TARGET/release/sluice"
mkdir -p "$DIR"

cargo build --release --quiet
if [[ -n "${BASE_BIN:-}" ]]; then
    base_bin="$BASE_BIN"
else
    BASE="${BASE:?set BASE (a commit) or BASE_BIN (a sluice binary)}"
    base_dir="target/bench/base-$(git rev-parse --short "$BASE")"
    if [[ ! -x "$base_dir/target/release/sluice" ]]; then
        rm -rf "$base_dir"
        git worktree prune
        git worktree add --detach "$base_dir" "$BASE" >/dev/null
        (cd "$base_dir" && CARGO_TARGET_DIR=target cargo build --release --quiet)
    fi
    base_bin="$base_dir/target/release/sluice"
fi

# Inputs, made once per size by this checkout's loadgen (the same files for both builds).
clicks="$DIR/clicks-$EVENTS.ndjson"
[[ -f "$clicks" ]] || "$HEAD_BIN" loadgen clicks --events "$EVENTS" --out "$clicks" >/dev/null
flow="$DIR/flow-$IMPRESSIONS"
[[ -f "$flow/flow_impressions.ndjson" ]] || "$HEAD_BIN" loadgen flow --events "$IMPRESSIONS" --out "$flow" >/dev/null
nexmark="$DIR/nexmark-$NEXMARK"
[[ -f "$nexmark/done" ]] || { "$HEAD_BIN" loadgen nexmark --events "$NEXMARK" --out "$nexmark" >/dev/null && touch "$nexmark/done"; }

# job WORKLOAD WHO: writes the job's TOML for one build (its own output directory) and prints
# its path.
job() {
    local w=$1 who=$2 out="$DIR/out-$1-$2"
    rm -rf "$out" && mkdir -p "$out"
    case "$w" in
        window)
            window_job_toml "$SHARDS" "$clicks" "$out/counts.ndjson" > "$out/job.toml" ;;
        contract)
            sed -e "s|shards = 2|shards = $SHARDS|" -e "s|data/flow_|$flow/flow_|" \
                -e "s|out/ad_spend.ndjson|$out/ad_spend.ndjson|" config/ad_spend.toml > "$out/job.toml" ;;
        interval)
            {
                printf '[runtime]\nshards = %s\n\n' "$SHARDS"
                for s in impressions clicks; do
                    printf '[sources.%s]\ntype = "file"\npath = "%s/flow_%s.ndjson"\nformat = "json"\nevent_time = { field = "ts", unit = "ms" }\nwatermark = { max_out_of_orderness = "5s" }\n\n' "$s" "$flow" "$s"
                done
                printf '[transforms.matched]\ntype = "interval_join"\nleft = "impressions"\nright = "clicks"\non = ["imp_id"]\nbetween = ["0s", "10s"]\n\n'
                printf '[sinks.out]\ntype = "file"\ninputs = ["matched"]\npath = "%s/interval.ndjson"\n' "$out"
            } > "$out/job.toml" ;;
        q*)
            cat benches/nexmark/ddl.sql "benches/nexmark/$w.sql" \
                | sed -e "s#'data/nexmark/#'$nexmark/#" -e "s#'out/#'$out/#" > "$out/job.sql"
            printf '[runtime]\nshards = %s\n\n[pipeline]\nsql = "%s"\n' "$SHARDS" "$out/job.sql" > "$out/job.toml" ;;
        *) echo "unknown workload $w" >&2; exit 2 ;;
    esac
    echo "$out/job.toml"
}

# run BIN TOML: prints "wall user sys" seconds of one run.
run() {
    local TIMEFORMAT='%R %U %S' t
    t=$( { time "$1" run --config "$2" >/dev/null 2>"$DIR/last.err"; } 2>&1 ) \
        || { echo "run failed: $1 $2" >&2; cat "$DIR/last.err" >&2; exit 1; }
    echo "$t"
}

# Every file a job wrote, its lines sorted: the same rows whatever order shards wrote them in.
rows() { find "$1" -type f ! -name 'job.*' -exec cat {} + 2>/dev/null | LC_ALL=C sort | md5sum | cut -d' ' -f1; }

machine_line
echo "base: $base_bin; head: $HEAD_BIN; $SHARDS shards, median of $RUNS alternating runs"
printf '| workload | base wall s | head wall s | wall ratio | base CPU s | head CPU s | CPU ratio | same rows |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for w in $WORKLOADS; do
    declare -a bw=() hw=() bc=() hc=()
    for i in $(seq 1 "$RUNS"); do
        for who in base head; do
            bin="$HEAD_BIN"; [[ $who == base ]] && bin="$base_bin"
            toml=$(job "$w" "$who")
            read -r wall user sys <<<"$(run "$bin" "$toml")"
            cpu=$(python3 -c "print(round($user + $sys, 3))")
            echo "run $i $w $who: wall ${wall}s cpu ${cpu}s" >&2
            if [[ $who == base ]]; then bw+=("$wall"); bc+=("$cpu"); else hw+=("$wall"); hc+=("$cpu"); fi
        done
    done
    same=no
    [[ "$(rows "$DIR/out-$w-base")" == "$(rows "$DIR/out-$w-head")" ]] && same=yes
    mbw=$(median "${bw[@]}") mhw=$(median "${hw[@]}") mbc=$(median "${bc[@]}") mhc=$(median "${hc[@]}")
    python3 - "$w" "$mbw" "$mhw" "$mbc" "$mhc" "$same" <<'PY'
import sys
w, bw, hw, bc, hc, same = sys.argv[1], *map(float, sys.argv[2:6]), sys.argv[6]
print(f"| {w} | {bw:.2f} | {hw:.2f} | {hw / bw:.3f} | {bc:.2f} | {hc:.2f} | {hc / bc:.3f} | {same} |")
PY
done
