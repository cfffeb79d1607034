#!/usr/bin/env bash
# Nexmark on sluice and on Flink, side by side (benches/nexmark/README.md): each query of
# benches/nexmark (ddl.sql + qN.sql, one job.sql) runs in sluice with 2 shards, then 1, and in
# Apache Flink 2.3 (PyFlink mini-cluster through scripts/parity/flink_run.py, parallelism 2, a
# watermark after every event) on the same `sluice loadgen nexmark` files; the outputs must be
# identical as multisets of rows (scripts/parity/compare.py), and a table is printed: events/s
# per core (the generated events, all three files, over the wall seconds and the shards or
# Flink's parallelism), the ratio, sluice's peak RSS and its operators' peak state (2 shards;
# `--stats` `state_bytes_peak`, each shard's peak summed), and whether the results agree.
# The updating queries (q4, q9, q15-q19) write debezium-json; compare.py materialises both
# changelogs. Flink writes q9 (a Top-1 without its row number) as upserts without before images,
# so q9 is materialised by its key (`upsert_key`). The `*_as_written` files are nexmark-flink's
# text where benches/nexmark keeps a rewrite beside it; both run by default.
# Installs PyFlink from PyPI into target/flink/venv on first use (needs Java 17), as
# scripts/flink_parity.sh does. Flink's seconds include its mini-cluster's start-up.
#
# Usage: scripts/nexmark.sh [--events N] [--queries q0,q1,...]
#        SLUICE=target/debug/sluice scripts/nexmark.sh --events 200000 --queries q0,q5
set -euo pipefail
cd "$(dirname "$0")/.."

EVENTS=10000000
QUERIES=q0,q1,q2,q3,q5,q7,q8,q11,q14,q20,q21,q22,q4,q9,q15,q15_mini_batch,q16,q17,q18,q19,q23,q5_as_written,q7_as_written,q8_as_written,q11_as_written
while [ $# -gt 0 ]; do
    case "$1" in
        --events) EVENTS="$2"; shift 2 ;;
        --queries) QUERIES="$2"; shift 2 ;;
        *) echo "nexmark.sh: unknown argument $1 (usage: --events N --queries q0,q1,...)" >&2; exit 2 ;;
    esac
done
SLUICE="${SLUICE:-target/release/sluice}"
VENV=target/flink/venv
ROOT="$(pwd)/target/nexmark"
# One data directory per event count, so a rerun of the same size reuses its files.
DATA="$ROOT/data-$EVENTS"

command -v java >/dev/null || { echo "nexmark.sh needs Java 17 (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "apache-flink==2.3.0"
fi
[ -x "$SLUICE" ] || cargo build --release --quiet

if [ ! -f "$DATA/done" ]; then
    rm -rf "$DATA" && mkdir -p "$DATA"
    "$SLUICE" loadgen nexmark --events "$EVENTS" --out "$DATA" > "$DATA/loadgen.log" 2>&1
    touch "$DATA/done"
fi

# job.sql for one engine: ddl.sql + the query, data paths at $DATA, the sink under $2.
job_sql() {
    cat benches/nexmark/ddl.sql "benches/nexmark/$1.sql" \
        | sed -e "s#'data/nexmark/#'$DATA/#" -e "s#'out/#'$2/#"
}

# Runs sluice on $1/job.sql with $2 shards; prints "wall_seconds peak_rss_kib".
run_sluice() {
    local dir="$1" shards="$2"
    printf '[runtime]\nshards = %s\n\n[pipeline]\nsql = "%s"\n\n[dead_letter]\npath = "%s"\n' \
        "$shards" "$dir/job.sql" "$dir/dead_letter.ndjson" > "$dir/job.toml"
    local t0 t1 rss=0
    t0=$(date +%s.%N)
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -v -o "$dir/time.txt" "$SLUICE" run --config "$dir/job.toml" --stats "$dir/stats.json" > "$dir/sluice.log" 2>&1 || return 1
        rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
    else
        # No GNU time: the kernel's high-water mark of the process, read until it exits.
        "$SLUICE" run --config "$dir/job.toml" --stats "$dir/stats.json" > "$dir/sluice.log" 2>&1 &
        local pid=$!
        while kill -0 "$pid" 2>/dev/null; do
            local hwm
            hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
            [ -n "$hwm" ] && rss=$hwm
            sleep 0.05
        done
        wait "$pid" || return 1
    fi
    t1=$(date +%s.%N)
    echo "$(echo "$t1 - $t0" | bc) $rss"
}

# upsert_key QUERY: the key to materialise QUERY's changelogs by, where Flink writes upserts.
upsert_key() { case "$1" in q9) echo id ;; *) echo "" ;; esac; }

per_core() { echo "scale=0; $EVENTS / $1 / $2" | bc; }

echo "Nexmark, $EVENTS events ($(basename "$SLUICE") binary $SLUICE), $(nproc) cores"
echo "| query | sluice ev/s/core (2 shards) | sluice ev/s/core (1 shard) | Flink ev/s/core (p=2) | ratio (2 shards / Flink) | sluice peak RSS MiB | sluice peak state MiB | identical |"
echo "|---|---|---|---|---|---|---|---|"
failed=0
IFS=',' read -r -a names <<< "$QUERIES"
for q in "${names[@]}"; do
    [ -f "benches/nexmark/$q.sql" ] || { echo "nexmark.sh: no benches/nexmark/$q.sql" >&2; failed=1; continue; }
    dir="$ROOT/$q"
    rm -rf "$dir" && mkdir -p "$dir/s2" "$dir/s1" "$dir/flink"
    for shards in 2 1; do
        job_sql "$q" "$dir/s$shards/out" > "$dir/s$shards/job.sql"
        out=$(run_sluice "$dir/s$shards" "$shards") \
            || { echo "sluice failed on $q ($shards shards):"; tail -5 "$dir/s$shards/sluice.log"; failed=1; continue 2; }
        read -r secs kib <<< "$out"
        if [ "$shards" = 2 ]; then s2=$secs rss=$kib; else s1=$secs; fi
    done
    # Parallelism 2 by a SET in the script, which flink_run.py applies over its default of 1.
    # Flink runs without the queries' state TTL, as nexmark-flink does: its TTL counts processing
    # time, so a regular join's rows would expire while Flink reads the other file (q20 lost half
    # its rows at 10 s); sluice's TTL counts event time and holds every pair of these files. The
    # tables' watermark alignment lines (ddl.sql) are left out too: they bound sluice's state.
    { echo "SET 'parallelism.default' = '2';"; job_sql "$q" "$dir/flink/out" | sed -e "/^SET 'table.exec.state.ttl'/d" -e "/^    'scan.watermark.alignment.group'/d" -e "s/'format' = 'json',\$/'format' = 'json'/" -e "s/^    'scan.watermark.alignment.max-drift' = '5 s');/);/"; } > "$dir/flink/job.sql"
    fs=$(TZ=UTC "$VENV/bin/python" scripts/parity/flink_run.py "$dir/flink/job.sql" 2> "$dir/flink/flink.log" | tail -1) \
        || { echo "flink failed on $q:"; tail -5 "$dir/flink/flink.log"; failed=1; continue; }
    same=yes
    UPSERT_KEY=$(upsert_key "$q") python3 scripts/parity/compare.py "$q" "$dir/flink/out" "$dir/s2/out" "$fs" "$s2" "$EVENTS" \
        > "$dir/compare.txt" 2> "$dir/compare.err" || same=no
    # The 1-shard run must give the same rows as the 2-shard one.
    python3 scripts/parity/compare.py "$q-1-shard" "$dir/s1/out" "$dir/s2/out" "$s1" "$s2" "$EVENTS" \
        >> "$dir/compare.txt" 2>> "$dir/compare.err" || same=no
    [ "$same" = yes ] || { failed=1; cat "$dir/compare.txt" "$dir/compare.err" | sed 's/^/    /' >&2; }
    a=$(per_core "$s2" 2) b=$(per_core "$s1" 1) f=$(per_core "$fs" 2)
    ratio=$(echo "scale=1; $a / $f" | bc)
    rows=$(head -1 "$dir/compare.txt" | awk -F'|' '{gsub(/ /, "", $4); print $4}')
    # The operators' peak state (each shard's peak, summed) of the 2-shard run.
    state=$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print("%.1f" % (sum(o["state_bytes_peak"] for o in s["operators"]) / 2**20))' "$dir/s2/stats.json")
    echo "| $q | $a | $b | $f | $ratio | $((rss / 1024)) | $state | $same ($rows rows) |"
done
exit $failed
