"""Compares two engines' outputs as multisets of rows. Numbers compare by value (Flink writes a
DECIMAL as Java's BigDecimal.stripTrailingZeros() does, 6593.308 or 1E+2; sluice writes it with
its scale's digits, 6593.3080), everything else exactly.

The outputs are first sorted as bytes (LC_ALL=C sort, outside Python): equal sorted bytes are
equal multisets, and a 10 M-event Nexmark output then needs no JSON parse. Only outputs that
differ as bytes (decimals written differently, other key orders) are parsed row by row.

A changelog written as debezium-json (an updating result) is materialised first: both engines'
tables after every change, compared as multisets (the changes themselves may differ in order
and in how many intermediate updates each engine emits).

With UPSERT_KEY=f1,f2 in the environment a changelog is materialised by that key instead: a
`c` replaces the row held under its key, a `d` removes it. Flink writes some results as upserts
without their before images (q9's Top-1 without its row number: only `c` records, each replacing
the previous row of its auction), which only a key can materialise.
Usage: python compare.py NAME FLINK_DIR SLUICE_DIR FLINK_SECONDS SLUICE_SECONDS EVENTS
Prints one table row; exits 1 when the multisets differ.
"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from decimal import Decimal


def files(d):
    return sorted(os.path.join(root, f) for root, _, fs in os.walk(d) for f in fs
                  if not f.endswith(".crc"))


def sorted_bytes(d, out):
    """Writes the non-blank lines of every output file under d, sorted as bytes, to out; returns
    how many lines."""
    # Bytes, not characters: grep and sort in a UTF-8 locale are several times slower.
    env = {**os.environ, "LC_ALL": "C"}
    cat = subprocess.Popen(["cat", "--", *files(d)] if files(d) else ["true"],
                           stdout=subprocess.PIPE)
    grep = subprocess.Popen(["grep", "-v", "^[[:space:]]*$"], stdin=cat.stdout,
                            stdout=subprocess.PIPE, env=env)
    cat.stdout.close()
    subprocess.run(["sort", "-S", "25%", "-o", out], stdin=grep.stdout, check=True, env=env)
    grep.wait()
    cat.wait()
    with open(out, "rb") as f:
        return sum(1 for _ in f)


def same_bytes(fd, sd):
    """(equal, flink rows, sluice rows) when the sorted outputs are byte-identical, else None."""
    with tempfile.TemporaryDirectory() as tmp:
        a, b = os.path.join(tmp, "f"), os.path.join(tmp, "s")
        na, nb = sorted_bytes(fd, a), sorted_bytes(sd, b)
        if subprocess.run(["cmp", "-s", a, b]).returncode == 0:
            return na, nb
    return None


def key(v):
    return json.dumps(v, sort_keys=True, default=lambda x: str(x.normalize()))


def is_change(v):
    """A Debezium change record as Flink's debezium-json format writes one."""
    return isinstance(v, dict) and "op" in v and ("before" in v or "after" in v)


def number(text):
    """A JSON number as a Decimal. A DOUBLE in Java's exponent form (`1.0E7`, `-1.5E-7`: an `E`
    without `+`, which BigDecimal writes for a DECIMAL) goes through its double first: Java 17's
    Double.toString sometimes writes more digits than the shortest that read back as the same
    double (`-1.60978210179491616E17` for `-1.6097821017949162E17`)."""
    if re.search(r"[eE]-?[0-9]", text):
        return Decimal(repr(float(text)))
    return Decimal(text)


def records(d):
    """Every non-blank line of the output files under d (not `.crc` or hidden ones), parsed, numbers
    as Decimal."""
    for root, _, files in os.walk(d):
        for f in sorted(files):
            if f.endswith(".crc") or f.startswith("."):
                continue
            for line in open(os.path.join(root, f)):
                if not line.strip():
                    continue
                v = json.loads(line, parse_float=number, parse_int=Decimal)
                yield v


def upsert_rows(d, fields):
    """The table a changelog under d leaves, materialised by the key `fields`."""
    table = {}
    for v in records(d):
        if v.get("op") in ("d", "u") and v.get("before") is not None:
            table.pop(key([v["before"].get(k) for k in fields]), None)
        if v.get("op") in ("c", "r", "u") and v.get("after") is not None:
            table[key([v["after"].get(k) for k in fields])] = key(v["after"])
    return collections.Counter(table.values())


def rows(d):
    """The rows of every output file under d as a multiset; a changelog (debezium-json: `c`/`r`
    insert `after`, `d` deletes `before`, `u` both) is materialised: the table it leaves."""
    c = collections.Counter()
    for v in records(d):
        if not is_change(v):
            c[key(v)] += 1
            continue
        if v["op"] in ("d", "u") and v.get("before") is not None:
            c[key(v["before"])] -= 1
        if v["op"] in ("c", "r", "u") and v.get("after") is not None:
            c[key(v["after"])] += 1
    negative = {k: n for k, n in c.items() if n < 0}
    if negative:
        print(f"  {d}: {len(negative)} rows deleted more often than inserted, e.g. "
              f"{list(negative.items())[:3]}", file=sys.stderr)
    return collections.Counter({k: n for k, n in c.items() if n != 0})


def main():
    name, fd, sd, fs, ss, events = sys.argv[1:7]
    fast = same_bytes(fd, sd)
    if fast:
        print(f"| {name} | {fast[0]} | {fast[1]} | identical | {float(fs):.2f} | {float(ss):.2f} |")
        sys.exit(0)
    upsert = [k for k in os.environ.get("UPSERT_KEY", "").split(",") if k]
    f, s = (upsert_rows(fd, upsert), upsert_rows(sd, upsert)) if upsert else (rows(fd), rows(sd))
    same = f == s
    print(f"| {name} | {sum(f.values())} | {sum(s.values())} | {'identical' if same else 'DIFFERENT'} "
          f"| {float(fs):.2f} | {float(ss):.2f} |")
    if not same:
        for label, diff in (("only in flink", f - s), ("only in sluice", s - f)):
            items = list(diff.items())
            print(f"  {label}: {sum(diff.values())} rows, e.g. {items[:3]}", file=sys.stderr)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
