"""Progress of a running backfill (scripts/backfill.sh step 2): every 2 s, from its /metrics,
records read, the event-time position against the target, rows written per second and the time
left at the current pace. Returns when the job's process ends."""
import os
import sys
import time
import urllib.request
from datetime import datetime, timezone

port, pid, start, target = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]


def epoch(t):
    return datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()


start_s = epoch(start)
target_s = epoch(target) if target else None


def alive():
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def scrape():
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
    except OSError:
        return None
    m = {}
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, value = line.rsplit(" ", 1)
        base = name.split("{", 1)[0]
        try:
            v = float(value)
        except ValueError:
            continue
        if base == "sluice_partition_watermark_seconds":
            # The replay's position: its slowest partition.
            m[base] = min(m.get(base, float("inf")), v)
        else:
            m[base] = m.get(base, 0.0) + v
    return m


last = None
while alive():
    time.sleep(2)
    m = scrape()
    if not m:
        continue
    now = time.time()
    read = m.get("sluice_events_in_total", 0)
    # Rows into tables where there are table sinks, results of the operators otherwise.
    rows = m.get("sluice_sink_rows_written_total", m.get("sluice_results_emitted_total", 0))
    wm = m.get("sluice_partition_watermark_seconds")
    goal = target_s or now
    line = f"backfill: {read:.0f} records read"
    if wm is not None and wm > 0:
        done = min(1.0, max(0.0, (wm - start_s) / max(1.0, goal - start_s)))
        line += f", event time at {datetime.fromtimestamp(wm, timezone.utc):%Y-%m-%dT%H:%M:%SZ} ({done:.0%} of the way to the target)"
    if last:
        dt = now - last[0]
        line += f", {(rows - last[1]) / dt:.0f} rows/s"
        if wm is not None and last[2] is not None and wm > last[2]:
            pace = (wm - last[2]) / dt  # event-time seconds per wall second
            line += f", ETA {max(0.0, goal - wm) / pace:.0f} s"
    print(line, flush=True)
    last = (now, rows, wm)
