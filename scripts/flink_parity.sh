#!/usr/bin/env bash
# Flink parity for the SQL subset (README "SQL"): every scripts/parity/*.sql file and
# config/ad_spend.sql run unchanged in Apache Flink 2.3 (PyFlink local mini-cluster, parallelism 1,
# a watermark after every event, so both engines see the same late rows) and in sluice (2 shards)
# on the same generated NDJSON files; the outputs must be identical as multisets of rows. Installs
# PyFlink from PyPI into target/flink/venv on first use (needs Java 17). Not part of CI (~300 MB
# download, a minute of JVM start-up per query).
#
# Usage: scripts/flink_parity.sh [NAME ...]      EVENTS=200000 SLUICE=target/debug/sluice scripts/flink_parity.sh
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS="${EVENTS:-200000}"
ROOT="$(pwd)/target/parity"
DATA="$ROOT/data"
VENV=target/flink/venv
SLUICE="${SLUICE:-target/release/sluice}"

command -v java >/dev/null || { echo "flink_parity.sh needs Java 17 (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "apache-flink==2.3.0"
fi
[ -x "$SLUICE" ] || cargo build --release --quiet

mkdir -p "$DATA"
if [ ! -f "$DATA/events" ] || [ "$(cat "$DATA/events")" != "$EVENTS" ]; then
    # Clicks 1% late by 20 s (so late rows are dropped in both), 50 ads, 20 000 users.
    "$SLUICE" loadgen clicks --events "$EVENTS" --keys 50 --users 20000 --rate 2000 \
        --late-fraction 0.01 --late-by-ms 20000 --out "$DATA/clicks.ndjson" >/dev/null
    "$SLUICE" loadgen flow --events $((EVENTS / 4)) --late-fraction 0.01 --out "$DATA" >/dev/null
    # The same prices as a Debezium changelog (creates, updates, deletes) for a versioned table.
    python3 scripts/parity/price_changes.py "$DATA/flow_prices.ndjson" "$DATA/flow_price_changes.ndjson"
    # The interval join reads clicks without late ones: a click later than the bound may still
    # find its impression in Flink, which drops rows only at its next cleanup (every half bound),
    # and not in sluice, which drops them as soon as the watermark passes (README "Interval join").
    "$SLUICE" loadgen flow --events $((EVENTS / 4)) --out "$DATA/ontime" >/dev/null
    echo "$EVENTS" > "$DATA/events"
fi

# Edge-case rows for the built-in function queries (builtins_*.sql).
python3 scripts/parity/builtins_data.py "$DATA/builtins.ndjson"

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for f in scripts/parity/*.sql; do names+=("$(basename "$f" .sql)"); done
    names+=(ad_spend)
fi
echo "| query | Flink rows | sluice rows | result | Flink s (incl. start-up) | sluice s |"
echo "|---|---|---|---|---|---|"
failed=0
for name in "${names[@]}"; do
    sql="scripts/parity/$name.sql"
    [ -f "$sql" ] || sql="config/$name.sql"
    dir="$ROOT/$name"
    rm -rf "$dir" && mkdir -p "$dir/sluice" "$dir/flink"
    sed -e "s#'path' = 'data/#'path' = '$DATA/#" -e "s#'path' = 'out/#'path' = '$dir/sluice/#" "$sql" > "$dir/job.sql"
    printf '[runtime]\nshards = 2\n\n[pipeline]\nsql = "%s"\n\n[dead_letter]\npath = "%s"\n' \
        "$dir/job.sql" "$dir/dead_letter.ndjson" > "$dir/job.toml"
    t0=$(date +%s.%N)
    "$SLUICE" run --config "$dir/job.toml" > "$dir/sluice.log" 2>&1 || { echo "sluice failed on $name:"; tail -5 "$dir/sluice.log"; failed=1; continue; }
    ss=$(echo "$(date +%s.%N) - $t0" | bc)
    fs=$(TZ=UTC "$VENV/bin/python" scripts/parity/flink_run.py "$(pwd)/$sql" "$DATA" "$dir/flink" 2> "$dir/flink.log" | tail -1) \
        || { echo "flink failed on $name:"; tail -5 "$dir/flink.log"; failed=1; continue; }
    python3 scripts/parity/compare.py "$name" "$dir/flink" "$dir/sluice" "$fs" "$ss" "$EVENTS" || failed=1
done
exit $failed
