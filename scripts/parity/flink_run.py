"""Runs a Flink SQL script in a PyFlink local mini-cluster, deterministically: parallelism 1 and a
watermark after every event (pipeline.auto-watermark-interval = 0), so late rows are the same ones
sluice sees (a `SET 'parallelism.default'` in the script overrides it). `data/` and `out/` in the
script's paths are rewritten to DATA and OUT when given. `sluice export flink` ships this file as
run_local.py.

Usage: python flink_run.py SCRIPT.sql [DATA OUT]   (prints the job's wall seconds)
"""
import re
import sys
import time

from pyflink.table import EnvironmentSettings, TableEnvironment


def statements(text):
    """The script's statements: cut at `;` outside quotes, `--` comments (to the end of their
    line, outside quotes) dropped."""
    out, cur, quote = [], [], False
    for line in text.splitlines():
        i = 0
        while i < len(line):
            ch = line[i]
            if not quote and line.startswith("--", i):
                break
            if ch == "'":
                quote = not quote
            if ch == ";" and not quote:
                if "".join(cur).strip():
                    out.append("".join(cur).strip())
                cur = []
            else:
                cur.append(ch)
            i += 1
        cur.append("\n")
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def main():
    script = sys.argv[1]
    text = open(script).read()
    if len(sys.argv) == 4:
        data, out = sys.argv[2], sys.argv[3]
        text = re.sub(r"'path'\s*=\s*'data/", f"'path' = '{data}/", text)
        text = re.sub(r"'path'\s*=\s*'out/", f"'path' = '{out}/", text)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = env.get_config()
    conf.set("parallelism.default", "1")
    conf.set("pipeline.auto-watermark-interval", "0 ms")
    conf.set("table.local-time-zone", "UTC")
    inserts = env.create_statement_set()
    n = 0
    for stmt in statements(text):
        m = re.match(r"SET\s+'([^']+)'\s*=\s*'([^']*)'", stmt, re.I)
        if m:
            conf.set(m.group(1), m.group(2))
        elif re.fullmatch(r"(BEGIN\s+STATEMENT\s+SET|END)", stmt, re.I):
            continue
        elif re.match(r"(EXECUTE\s+STATEMENT\s+SET\s+)?BEGIN\s+INSERT", stmt, re.I):
            inserts.add_insert_sql(re.sub(r"^(EXECUTE\s+STATEMENT\s+SET\s+)?BEGIN\s+", "", stmt, flags=re.I))
            n += 1
        elif stmt.upper().startswith("INSERT"):
            inserts.add_insert_sql(stmt)
            n += 1
        else:
            env.execute_sql(stmt)
    t0 = time.time()
    inserts.execute().wait()
    print(f"{time.time() - t0:.3f}")


if __name__ == "__main__":
    main()
