#!/usr/bin/env bash
# Joins end to end from files: an interval join of IMPRESSIONS impressions (default 2 000 000, 1 000 a
# second of event time) with about as many clicks (0-20 s after their impression, half inside the
# 10 s bound), and a temporal join of as many orders with a rate changelog (20 currencies, a new
# rate every ~2 s each). Both read NDJSON files written here by python3; RUNS runs each (default
# 3); prints the median input events/s, the matches (interval) and probes (temporal) per second,
# and the peak rows held, from --stats.
#
# Usage: scripts/bench_joins.sh          IMPRESSIONS=500000 SHARDS=2 RUNS=3 scripts/bench_joins.sh
set -euo pipefail

cd "$(dirname "$0")/.."
N="${IMPRESSIONS:-2000000}"
RUNS="${RUNS:-3}"
SHARDS="${SHARDS:-2}"
TARGET="${CARGO_TARGET_DIR:-target}"
DIR=target/bench/joins

command -v python3 >/dev/null || { echo "bench_joins.sh needs python3" >&2; exit 1; }
cargo build --release --quiet
mkdir -p "$DIR"

if [[ ! -f "$DIR/impressions-$N.ndjson" ]]; then
    python3 - "$N" "$DIR" <<'PY'
import random, sys
n, d = int(sys.argv[1]), sys.argv[2]
r = random.Random(7)
def jittered(rows):
    rows.sort(key=lambda x: x[0] + r.randrange(2000))
    return "".join(l + "\n" for _, l in rows)
imps, clicks, orders, rates = [], [], [], []
for i in range(n):
    ts = i + r.randrange(1000)
    imps.append((ts, f'{{"imp_id":"i-{i}","ad_id":"ad-{i % 1000}","ts":{ts}}}'))
    if r.random() < 0.9:
        c = ts + r.randrange(20001)
        clicks.append((c, f'{{"click_id":"c-{i}","imp_id":"i-{i}","ts":{c}}}'))
    cur = f"C{i % 20}"
    orders.append((ts, f'{{"order_id":{i},"currency":"{cur}","amount":{r.randrange(100000) / 100},"ts":{ts}}}'))
for c in range(20):
    t = 0
    while t < n + 1000:
        rates.append((t, f'{{"currency":"C{c}","rate":{r.randrange(1, 2000000) / 1000000},"ts":{t}}}'))
        t += 1000 + r.randrange(2000)
for name, rows in (("impressions", imps), ("clicks", clicks), ("orders", orders), ("rates", rates)):
    with open(f"{d}/{name}-{n}.ndjson", "w") as f:
        f.write(jittered(rows))
PY
fi

source_of() { # NAME FILE
    printf '[sources.%s]\ntype = "file"\npath = "%s"\nformat = "json"\nevent_time = { field = "ts", unit = "ms" }\nwatermark = { max_out_of_orderness = "3s" }\n\n' "$1" "$2"
}
{
    printf '[runtime]\nshards = %s\n\n' "$SHARDS"
    source_of impressions "$DIR/impressions-$N.ndjson"
    source_of clicks "$DIR/clicks-$N.ndjson"
    printf '[transforms.matched]\ntype = "interval_join"\nleft = "impressions"\nright = "clicks"\non = ["imp_id"]\nbetween = ["0s", "10s"]\n\n'
    printf '[sinks.out]\ntype = "file"\ninputs = ["matched"]\npath = "%s/interval.out.ndjson"\n' "$DIR"
} > "$DIR/interval.toml"
{
    printf '[runtime]\nshards = %s\n\n' "$SHARDS"
    source_of orders "$DIR/orders-$N.ndjson"
    source_of fx_rates "$DIR/rates-$N.ndjson"
    printf '[transforms.priced]\ntype = "temporal_join"\ninput = "orders"\ntable = "fx_rates"\non = { input = "currency", table = "currency" }\nkind = "left"\n\n'
    printf '[sinks.out]\ntype = "file"\ninputs = ["priced"]\npath = "%s/temporal.out.ndjson"\n' "$DIR"
} > "$DIR/temporal.toml"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || uname -m)"
echo "data: $N impressions + clicks, $N orders + a 20-currency rate changelog; $SHARDS shards, $RUNS runs"
for i in $(seq 1 "$RUNS"); do
    for name in interval temporal; do
        "$TARGET/release/sluice" run --config "$DIR/$name.toml" --stats "$DIR/$name.$i.json" 2>"$DIR/$name.$i.log"
    done
done
python3 - "$RUNS" "$DIR" <<'PY'
import json, sys
runs, d = int(sys.argv[1]), sys.argv[2]
for name, what in (("interval", "matches"), ("temporal", "probes answered")):
    stats = sorted((json.load(open(f"{d}/{name}.{i}.json")) for i in range(1, runs + 1)),
                   key=lambda s: s["events_per_second"])
    s = stats[(len(stats) - 1) // 2]
    j = s["joins"][0]
    print(f"{name}: {s['events_per_second'] / 1e6:.2f} M input events/s; {s['results_emitted']} {what} in "
          f"{s['elapsed_seconds']:.2f} s = {s['results_emitted'] / s['elapsed_seconds'] / 1e6:.2f} M/s; "
          f"peak rows held {j['peak']}, late {j['late']}")
PY
