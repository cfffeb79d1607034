#!/usr/bin/env bash
# Rows per second into PostgreSQL through the postgres sink (upserts keyed on ad_id and
# window_start, batches of 5000, one connection per shard) against psql's `\copy` of the same rows
# into the same table shape (the fastest way in, no upsert), as a ratio; each measured RUNS times
# alternating (default 3), medians reported. The rows are window-result shaped: ad_id, window_start,
# window_end, clicks, spend (an exact decimal). Parquet: the parquet sink writing the same rows
# (spend pinned DECIMAL(18,2)) against DuckDB converting the same NDJSON file to Parquet
# (`COPY (SELECT ... FROM read_json(...)) TO ... (FORMAT parquet)`), as a ratio.
#
# Usage: scripts/bench_sinks.sh           ROWS=200000 RUNS=5 scripts/bench_sinks.sh
# Starts the local server (scripts/postgres-local.sh) if it is not running; installs DuckDB's Python
# package (scripts/duckdb-local.sh ensure) if missing.
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/window_job.sh
ROWS="${ROWS:-1000000}"
RUNS="${RUNS:-3}"
SHARDS="${SHARDS:-2}"
DIR=target/bench/sinks
BIN="${CARGO_TARGET_DIR:-target}/release/sluice"
mkdir -p "$DIR"
cargo build --release --quiet
bash scripts/postgres-local.sh start
URL=$(bash scripts/postgres-local.sh url)
pg() { bash scripts/postgres-local.sh psql -X -q -v ON_ERROR_STOP=1 "$@"; }

DATA="$DIR/rows-$ROWS.ndjson"
if [[ ! -f "$DATA" ]]; then
    python3 - "$ROWS" "$DATA" "$DIR/rows-$ROWS.csv" <<'PY'
import sys
n, out, csv = int(sys.argv[1]), open(sys.argv[2], "w"), open(sys.argv[3], "w")
for i in range(n):
    ad, w = f"ad-{i % 1000}", 1_700_000_000_000 + (i // 1000) * 60_000
    c, s = i % 97 + 1, f"{i % 9973}.{i % 100:02d}"
    out.write(f'{{"ad_id":"{ad}","window_start":{w},"window_end":{w + 60000},"clicks":{c},"spend":{s},"ts":{w}}}\n')
    csv.write(f"{ad},{w},{w + 60000},{c},{s}\n")
PY
fi
CSV="$DIR/rows-$ROWS.csv"
TABLE_DDL="(ad_id text NOT NULL, window_start bigint NOT NULL, window_end bigint, clicks bigint, spend numeric, PRIMARY KEY (ad_id, window_start))"

cat > "$DIR/pg.toml" <<TOML
[runtime]
shards = $SHARDS

[sources.rows]
type = "file"
path = "$DATA"
format = "json"
event_time = { field = "ts", unit = "ms" }

[transforms.results]
type = "select"
inputs = ["rows"]
fields = { ad_id = "ad_id", window_start = "window_start", window_end = "window_end", clicks = "clicks", spend = "spend" }

[sinks.db]
type = "postgres"
inputs = ["results"]
url = "$URL"
table = "bench_upsert"
key = ["ad_id", "window_start"]
TOML

sluice_run() {
    pg -c "SET client_min_messages = warning; DROP TABLE IF EXISTS bench_upsert; CREATE TABLE bench_upsert $TABLE_DDL"
    rate_of "$ROWS" "$BIN" run --config "$DIR/pg.toml" 2>"$DIR/pg.log"
}
copy_run() {
    pg -c "SET client_min_messages = warning; DROP TABLE IF EXISTS bench_copy; CREATE TABLE bench_copy $TABLE_DDL"
    rate_of "$ROWS" pg -c "\\copy bench_copy FROM '$CSV' WITH (FORMAT csv)"
}
# alternate A B LABEL_A LABEL_B: RUNS pairs of A then B (each prints rows/s), each pair shown;
# leaves the medians in MA and MB.
alternate() {
    local a=() b=() r
    for r in $(seq "$RUNS"); do
        a+=("$($1)"); b+=("$($2)")
        echo "run $r: $3 ${a[-1]} rows/s, $4 ${b[-1]} rows/s"
    done
    MA=$(median "${a[@]}"); MB=$(median "${b[@]}")
}

machine_line
echo "rows: $ROWS window-result rows; $SHARDS shards; PostgreSQL $(pg -tAc 'SHOW server_version')"
alternate sluice_run copy_run "sluice upserts" "psql \\copy"
got=$(pg -tAc "SELECT count(*) FROM bench_upsert")
[[ "$got" == "$ROWS" ]] || { echo "bench_sinks: the sink wrote $got rows of $ROWS" >&2; exit 1; }
python3 -c "print(f'postgres: sluice {$MA} rows/s, \\\\copy {$MB} rows/s: {$MA / $MB:.2f}x of COPY (medians of $RUNS)')"

# Parquet: the sink (one part file per shard, no checkpoint) against DuckDB's own writer.
bash scripts/duckdb-local.sh ensure
cat > "$DIR/pq.toml" <<TOML
$(sed -n '/^\[runtime\]/,/^\[sinks.db\]/p' "$DIR/pg.toml" | sed '$d')
[sinks.history]
type = "parquet"
inputs = ["results"]
path = "$DIR/pq-out"
columns = { spend = "decimal(18,2)" }
TOML
sluice_pq() {
    rm -rf "$DIR/pq-out"
    rate_of "$ROWS" "$BIN" run --config "$DIR/pq.toml" 2>"$DIR/pq.log"
}
duckdb_copy() {
    bash scripts/duckdb-local.sh query "COPY (SELECT ad_id, window_start, window_end, clicks, CAST(spend AS DECIMAL(18,2)) AS spend FROM read_json('$DATA', format = 'newline_delimited')) TO '$DIR/duck.parquet' (FORMAT parquet)" >/dev/null
}
duckdb_pq() {
    rm -f "$DIR/duck.parquet"
    rate_of "$ROWS" duckdb_copy
}
alternate sluice_pq duckdb_pq "sluice parquet" DuckDB
got=$(bash scripts/duckdb-local.sh query "SELECT count(*) AS n FROM read_parquet('$DIR/pq-out/*.parquet')" | tail -1)
[[ "$got" == "$ROWS" ]] || { echo "bench_sinks: the parquet sink wrote $got rows of $ROWS" >&2; exit 1; }
python3 -c "print(f'parquet: sluice {$MA} rows/s, DuckDB {$MB} rows/s: {$MA / $MB:.2f}x of DuckDB (medians of $RUNS)')"
