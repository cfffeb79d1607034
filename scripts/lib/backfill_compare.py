"""Compares each new table a backfill wrote with the live one (scripts/backfill.sh step 3): per
window_start over the windows the backfill covers (from the start time to its newest window), the
row count and the sum of every numeric column; lists the windows that differ and prints the SQL
that cuts readers over with a view. Exits 2 when any table differs."""
import os
import subprocess
import sys
import tomllib
from datetime import datetime

cfg_path, start, suffix, psql = sys.argv[1:5]
cfg = tomllib.load(open(cfg_path, "rb"))
start_ms = int(datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp() * 1000)
NUMERIC = {"bigint", "integer", "smallint", "numeric", "double precision", "real"}
SHOWN = 20


def query(url, sql):
    r = subprocess.run([psql, url, "-X", "-q", "-t", "-A", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"backfill: psql failed: {r.stderr.strip()}")
    return [l.split("\t") for l in r.stdout.splitlines() if l]


def ident(name):
    return ".".join('"' + p.replace('"', '""') + '"' for p in name.split("."))


def literal(s):
    return "'" + s.replace("'", "''") + "'"


differing_tables = 0
sinks = [(n, s) for n, s in cfg.get("sinks", {}).items() if s.get("type") == "postgres"]
if not sinks:
    print("backfill: no postgres sink to compare; compare the file outputs under OUT_DIR by hand")
for name, s in sinks:
    url = s.get("url") or os.environ.get(s.get("url_env", ""), "")
    new = s["table"]
    if not suffix or not new.endswith(suffix):
        sys.exit(f"backfill: sink `{name}` writes `{new}`, not a `{suffix}` table: refusing to compare a table with itself")
    old = new[: -len(suffix)]
    cols = query(url, "SELECT a.attname, format_type(a.atttypid, NULL) FROM pg_attribute a "
                      f"WHERE a.attrelid = to_regclass({literal(ident(new))}) AND a.attnum > 0 "
                      "AND NOT a.attisdropped ORDER BY a.attnum")
    types = dict(cols)
    if "window_start" not in types:
        print(f"backfill: `{new}` has no window_start column; compare it with `{old}` by hand")
        continue
    sums = [c for c, t in cols if t in NUMERIC and c not in ("window_start", "window_end")]
    from_ = (f"to_timestamp({start_ms} / 1000.0)" if types["window_start"].startswith("timestamp")
             else str(start_ms))
    agg = ", ".join(["count(*) AS n"] + [f'sum({ident(c)}) AS "s_{i}"' for i, c in enumerate(sums)])
    per = lambda t: (f"SELECT window_start, {agg} FROM {ident(t)} WHERE window_start >= {from_} "
                     f"AND window_start <= (SELECT max(window_start) FROM {ident(new)}) GROUP BY 1")
    pairs = ["a.n, b.n"] + [f'a."s_{i}", b."s_{i}"' for i in range(len(sums))]
    differ = " OR ".join(["a.n IS DISTINCT FROM b.n"] +
                         [f'a."s_{i}" IS DISTINCT FROM b."s_{i}"' for i in range(len(sums))])
    rows = query(url, f"WITH a AS ({per(old)}), b AS ({per(new)}) "
                      f"SELECT coalesce(a.window_start, b.window_start), {', '.join(pairs)} "
                      f"FROM a FULL JOIN b USING (window_start) WHERE {differ} ORDER BY 1")
    windows = query(url, f"SELECT count(DISTINCT window_start) FROM {ident(new)} WHERE window_start >= {from_}")[0][0]
    if not rows:
        print(f"backfill: sink `{name}`: `{new}` equals `{old}` over {windows} windows "
              f"(row counts and sums of {', '.join(sums) or 'no numeric column'})")
    else:
        differing_tables += 1
        print(f"backfill: sink `{name}`: {len(rows)} of {windows} windows differ between `{old}` (old) and `{new}` (new):")
        head = ["window_start", "rows old", "rows new"] + [f"{c} {w}" for c in sums for w in ("old", "new")]
        print("  " + "\t".join(head))
        for r in rows[:SHOWN]:
            print("  " + "\t".join(v if v else "-" for v in r))
        if len(rows) > SHOWN:
            print(f"  ... and {len(rows) - SHOWN} more")
    view = old + "_live"
    print(f"backfill: to cut readers over to `{new}` (readers query the view `{view}`):\n"
          f"  BEGIN; CREATE OR REPLACE VIEW {ident(view)} AS SELECT * FROM {ident(new)}; COMMIT;\n"
          f"  and back: CREATE OR REPLACE VIEW {ident(view)} AS SELECT * FROM {ident(old)};")
sys.exit(2 if differing_tables else 0)
