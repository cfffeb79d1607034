"""Compares two engines' outputs as multisets of rows. Numbers compare by value (Flink writes a
DECIMAL as Java's BigDecimal.stripTrailingZeros() does, 6593.308 or 1E+2; sluice writes it with
its scale's digits, 6593.3080), everything else exactly.

Usage: python compare.py NAME FLINK_DIR SLUICE_DIR FLINK_SECONDS SLUICE_SECONDS EVENTS
Prints one table row; exits 1 when the multisets differ.
"""
import collections
import json
import os
import sys
from decimal import Decimal


def rows(d):
    c = collections.Counter()
    for root, _, files in os.walk(d):
        for f in files:
            if f.endswith(".crc"):
                continue
            for line in open(os.path.join(root, f)):
                if line.strip():
                    v = json.loads(line, parse_float=Decimal, parse_int=Decimal)
                    c[json.dumps(v, sort_keys=True, default=lambda x: str(x.normalize()))] += 1
    return c


def main():
    name, fd, sd, fs, ss, events = sys.argv[1:7]
    f, s = rows(fd), rows(sd)
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
