#!/usr/bin/env python3
"""Turns flow_prices.ndjson (one price per line) into a Debezium JSON changelog of an ad_prices
table keyed by ad_id: an ad's first price is a create ("c"), a later one an update ("u") whose
before image is the ad's previous row (with its old ts, as Debezium writes it), and every ninth
price deletes the ad's row instead ("d"), so its next price creates it again. Deterministic: the
same prices give the same changelog.

Usage: price_changes.py PRICES.ndjson OUT.ndjson
"""
import json
import sys


def main(src, dst):
    live = {}
    with open(src) as f, open(dst, "w") as out:
        for i, line in enumerate(f):
            row = json.loads(line)
            ad = row["ad_id"]
            before = live.get(ad)
            if before is None:
                change = {"before": None, "after": row, "op": "c"}
                live[ad] = row
            elif i % 9 == 4:
                change = {"before": before, "after": None, "op": "d"}
                del live[ad]
            else:
                change = {"before": before, "after": row, "op": "u"}
                live[ad] = row
            out.write(json.dumps(change, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
