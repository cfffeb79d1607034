#!/usr/bin/env bash
# The cost of checkpointing on end-to-end throughput: the same generator job run RUNS times (default
# 3) each way, alternating — `plain` without checkpoints, `final` with `[checkpoint]` but an interval
# longer than the run (only the final checkpoint: what the exactly-once file sink costs, as it writes
# every result twice, staged then committed, and fsyncs both), and `ckpt` with a checkpoint every
# INTERVAL (default 10s) — and the median events/s of each compared. The job keeps a sizeable state on purpose: a
# WINDOW-long (default 10m) tumbling count() + sum(bid) per ad_id over KEYS (default 2 000 000)
# keys with Zipf exponent ZIPF (default 0.5), so most keys are live in every window. Prints the
# overhead and, from the checkpointed runs' --stats, checkpoints completed, snapshot size, longest
# checkpoint, longest shard pause and write MB/s.
#
# Usage: scripts/bench_checkpoint.sh        EVENTS=200000000 SHARDS=2 RUNS=3 scripts/bench_checkpoint.sh
set -euo pipefail

cd "$(dirname "$0")/.."
SHARDS="${SHARDS:-2}"
EVENTS="${EVENTS:-200000000}"
RUNS="${RUNS:-3}"
KEYS="${KEYS:-2000000}"
ZIPF="${ZIPF:-0.5}"
WINDOW="${WINDOW:-10m}"
INTERVAL="${INTERVAL:-10s}"
TARGET="${CARGO_TARGET_DIR:-target}"
DIR=target/bench/checkpoint

command -v python3 >/dev/null || { echo "bench_checkpoint.sh needs python3 to read the stats JSON" >&2; exit 1; }
cargo build --release --quiet
mkdir -p "$DIR"

# write_config NAME TAIL
write_config() {
    cat > "$DIR/$1.toml" <<TOML
[runtime]
shards = $SHARDS

[sources.clicks]
type = "generator"
count = $EVENTS
keys = $KEYS
zipf_exponent = $ZIPF
watermark = { max_out_of_orderness = "5s" }

[transforms.per_ad]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "$WINDOW" }
aggregates = { clicks = "count()", spend = "sum(bid)" }

[sinks.counts]
type = "file"
inputs = ["per_ad"]
path = "$DIR/$1.out.ndjson"
$2
TOML
    "$TARGET/release/sluice" validate --config "$DIR/$1.toml" >/dev/null
}
write_config plain ""
write_config final "
[checkpoint]
dir = \"$DIR/state\"
interval = \"1000h\""
write_config ckpt "
[checkpoint]
dir = \"$DIR/state\"
interval = \"$INTERVAL\""

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || uname -m)"
echo "job: tumbling $WINDOW count()+sum(bid) by ad_id, $KEYS keys (zipf $ZIPF), $EVENTS generated events, $SHARDS shards; checkpoint every $INTERVAL"
for i in $(seq 1 "$RUNS"); do
    for name in plain final ckpt; do
        rm -rf "$DIR/state"
        "$TARGET/release/sluice" run --config "$DIR/$name.toml" --stats "$DIR/$name.$i.json" 2>"$DIR/$name.$i.log"
    done
done
python3 - "$RUNS" "$DIR" <<'PY'
import json, sys
runs, d = int(sys.argv[1]), sys.argv[2]
def load(name):
    return [json.load(open(f"{d}/{name}.{i}.json")) for i in range(1, runs + 1)]
def median(xs):
    xs = sorted(xs)
    return xs[(len(xs) - 1) // 2]
plain, final, ckpt = load("plain"), load("final"), load("ckpt")
for name, stats in (("plain", plain), ("final", final), ("ckpt", ckpt)):
    print(f"  {name}: " + ", ".join(f"{s['events_per_second'] / 1e6:.2f}" for s in stats) + " M events/s")
p, f, c = (median([s["events_per_second"] for s in x]) for x in (plain, final, ckpt))
print(f"median M events/s: no checkpoints {p / 1e6:.2f}; final checkpoint only {f / 1e6:.2f} "
      f"({100 * (p - f) / p:.1f}% = exactly-once output); every interval {c / 1e6:.2f} "
      f"({100 * (f - c) / f:.1f}% more = periodic checkpoints; {100 * (p - c) / p:.1f}% in all)")
for s in ckpt:
    k = s["checkpoint"]
    print(f"  checkpointed run: {s['elapsed_seconds']:.1f} s, {k['completed']} checkpoints (incl. the final one), "
          f"largest {k['max_size_bytes'] / 1e6:.0f} MB, {k['total_bytes'] / 1e6:.0f} MB in all, longest {k['max_duration_ms']:.0f} ms, "
          f"shard pause up to {k['max_sync_pause_ms']:.1f} ms, alignment up to {k['max_alignment_ms']:.1f} ms, "
          f"writes {k['write_mb_per_s']:.0f} MB/s")
PY
