#!/usr/bin/env bash
# Same job, same file, two engines: Apache Flink 2.3 (PyFlink, local mini-cluster, Java 17) and sluice.
# Job: 1-minute tumbling count() + sum(bid) by ad_id, watermark = max event time - 5 s, over an NDJSON
# file from `sluice loadgen` (no late events, so both engines must agree exactly). Prints each engine's
# events/s and compares every (ad_id, window_start) result. Not part of CI (it downloads Flink, ~300 MB).
#
# Usage: scripts/flink_compare.sh            EVENTS=2000000 scripts/flink_compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS="${EVENTS:-2000000}"
DIR=target/flink
VENV="$DIR/venv"
DATA="$DIR/clicks.ndjson"
mkdir -p "$DIR"

command -v java >/dev/null || { echo "flink_compare.sh needs Java 17 (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "apache-flink==2.3.0"
fi

cargo build --release --quiet
if [ ! -f "$DATA" ] || [ "$(wc -l < "$DATA")" -ne "$EVENTS" ]; then
    ./target/release/sluice loadgen clicks --events "$EVENTS" --keys 100000 --out "$DATA"
fi

cat > "$DIR/sluice.toml" <<TOML
[runtime]
shards = 2
[sources.clicks]
type = "file"
path = "$DATA"
event_time = { field = "ts", unit = "ms" }
watermark = { max_out_of_orderness = "5s", idle_timeout = "30s" }
[transforms.cpm]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "1m" }
aggregates = { clicks = "count()", spend = "sum(bid)" }
[sinks.out]
type = "file"
inputs = ["cpm"]
path = "$DIR/sluice_out.ndjson"
TOML
./target/release/sluice run --config "$DIR/sluice.toml" --stats "$DIR/sluice_stats.json" 2> "$DIR/sluice.log"

cat > "$DIR/flink_job.py" <<'PY'
import json, sys, time
from pyflink.table import EnvironmentSettings, TableEnvironment
path, events, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
env.get_config().set("parallelism.default", "2")
env.execute_sql(f"""
CREATE TABLE clicks (ad_id STRING, user_id STRING, ts BIGINT, bid BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND)
WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json')""")
query = """SELECT ad_id, UNIX_TIMESTAMP(CAST(window_start AS STRING)) AS ws_s, window_start,
  COUNT(*) AS clicks, SUM(bid) AS spend
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTES))
  GROUP BY ad_id, window_start, window_end"""
env.execute_sql("CREATE TABLE sink (ad_id STRING, ws_s BIGINT, window_start TIMESTAMP(3), clicks BIGINT, spend BIGINT) WITH ('connector' = 'blackhole')")
t0 = time.time()
env.execute_sql("INSERT INTO sink " + query).wait()
secs = time.time() - t0
rows = {}
with env.execute_sql(query).collect() as results:
    for r in results:
        rows[f"{r[0]}@{r[2].isoformat()}"] = (r[3], r[4])
json.dump({"seconds": secs, "events_per_second": events / secs, "rows": rows}, open(out, "w"))
PY
TZ=UTC "$VENV/bin/python" "$DIR/flink_job.py" "$(pwd)/$DATA" "$EVENTS" "$DIR/flink_out.json" > "$DIR/flink.log" 2>&1 || { tail -30 "$DIR/flink.log"; exit 1; }

python3 - "$DIR" "$EVENTS" <<'PY'
import json, sys, datetime
d, events = sys.argv[1], int(sys.argv[2])
flink = json.load(open(f"{d}/flink_out.json"))
sluice_stats = json.load(open(f"{d}/sluice_stats.json"))
final = {}
for line in open(f"{d}/sluice_out.ndjson"):
    r = json.loads(line)
    ws = datetime.datetime.fromtimestamp(r["window_start"] / 1000, datetime.UTC).replace(tzinfo=None).isoformat()
    final[f'{r["ad_id"]}@{ws}'] = (r["clicks"], r["spend"])
fl = {k: tuple(v) for k, v in flink["rows"].items()}
missing = set(fl) - set(final); extra = set(final) - set(fl)
differ = [k for k in set(fl) & set(final) if fl[k] != final[k]]
print(f"events: {events}; results: flink {len(fl)}, sluice {len(final)}; only in flink {len(missing)}, only in sluice {len(extra)}, differing {len(differ)}")
print(f"flink 2.3 (parallelism 2, job wall time incl. start-up): {flink['events_per_second']/1e6:.2f} M events/s")
print(f"sluice (2 shards): {sluice_stats['events_per_second']/1e6:.2f} M events/s")
sys.exit(1 if missing or extra or differ else 0)
PY
