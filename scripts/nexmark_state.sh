#!/usr/bin/env bash
# Nexmark state on a 4x longer input (benches/nexmark/README.md): runs each query in sluice
# (2 shards) on `sluice loadgen nexmark` files of N and 4N events and prints its operators' peak
# state (`--stats` `operators[].state_bytes_peak`, each shard's peak summed) for both, and the
# ratio: a query whose state is bounded by its windows, joins' bounds or TTL stays near 1.0x.
#
# Usage: scripts/nexmark_state.sh [--events N] [--queries q5,q7,...]
set -euo pipefail
cd "$(dirname "$0")/.."

EVENTS=2500000
QUERIES=q3,q5,q7,q8,q11,q20
while [ $# -gt 0 ]; do
    case "$1" in
        --events) EVENTS="$2"; shift 2 ;;
        --queries) QUERIES="$2"; shift 2 ;;
        *) echo "nexmark_state.sh: unknown argument $1 (usage: --events N --queries q5,q7,...)" >&2; exit 2 ;;
    esac
done
SLUICE="${SLUICE:-target/release/sluice}"
[ -x "$SLUICE" ] || cargo build --release --quiet
ROOT="$(pwd)/target/nexmark"

data() {
    local dir="$ROOT/data-$1"
    if [ ! -f "$dir/done" ]; then
        rm -rf "$dir" && mkdir -p "$dir"
        "$SLUICE" loadgen nexmark --events "$1" --out "$dir" > "$dir/loadgen.log" 2>&1
        touch "$dir/done"
    fi
    echo "$dir"
}

# Peak state MiB of query $1 over the files in $2.
peak() {
    local dir="$ROOT/state-$1-$(basename "$2")"
    rm -rf "$dir" && mkdir -p "$dir"
    cat benches/nexmark/ddl.sql "benches/nexmark/$1.sql" \
        | sed -e "s#'data/nexmark/#'$2/#" -e "s#'out/#'$dir/out/#" > "$dir/job.sql"
    printf '[runtime]\nshards = 2\n\n[pipeline]\nsql = "%s"\n' "$dir/job.sql" > "$dir/job.toml"
    "$SLUICE" run --config "$dir/job.toml" --stats "$dir/stats.json" > "$dir/sluice.log" 2>&1
    python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print("%.2f" % (sum(o["state_bytes_peak"] for o in s["operators"]) / 2**20))' "$dir/stats.json"
}

short=$(data "$EVENTS")
long=$(data "$((EVENTS * 4))")
echo "Nexmark peak state, $EVENTS and $((EVENTS * 4)) events, sluice 2 shards ($SLUICE), $(nproc) cores"
echo "| query | peak state MiB ($EVENTS) | peak state MiB ($((EVENTS * 4))) | ratio |"
echo "|---|---|---|---|"
IFS=',' read -r -a names <<< "$QUERIES"
for q in "${names[@]}"; do
    a=$(peak "$q" "$short") b=$(peak "$q" "$long")
    echo "| $q | $a | $b | $(echo "scale=2; $b / $a" | bc) |"
done
