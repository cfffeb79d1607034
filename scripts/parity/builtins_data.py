"""Rows for the built-in function parity queries (scripts/parity/builtins_*.sql): strings with the
edge cases Flink's functions treat specially (empty, spaces, Unicode, URLs, dates in several
formats, Base64, percent escapes), integers (zero, negative, past 32 bits), decimals, epoch
milliseconds at calendar boundaries (leap days, year ends, before 1970, ISO week 53) and NULLs.
Every combination of a string with several times, so each function meets each edge case.

Usage: python builtins_data.py OUT.ndjson
"""
import json
import sys

STRINGS = [
    "hello wORLD", "", "  padded  ", "héllo wörld", "a,b,,c",
    "http://user@host.com:8080/p/a.php?k1=v1&k2=v2#frag", "https://x.org", "not a url",
    "2024-02-29 23:59:59", "2024-02-30 10:00:00", "2023-12-31", "2024-1-5 7:8:9",
    "2024-01-05 10:30:00.123", "31/12/2023 08:05", "aGVsbG8gd29ybGQ=", "a%20b+c%3D%C3%BC",
    "xxhixx", "ÀÉÎ-ß ok", "12345", "3rd-party API_key", "hhh", "ab",
]
INTS = [-5, 0, 1, 7, 100, 2147483648, -9223372036854775807, 353]
DECIMALS = ["-7.250", "0.000", "42.324", "-0.050", "123456.789", "1.005"]
TIMES = [
    1709251199999,  # 2024-02-29 23:59:59.999
    0,
    -1,  # 1969-12-31 23:59:59.999
    1704067200000,  # 2024-01-01 00:00:00 (a Monday)
    1609459200000,  # 2021-01-01, ISO week 53 of 2020
    951782400000,  # 2000-02-29
    4102444800000,  # 2100-01-01
    1735689599000,  # 2024-12-31 23:59:59
    1706659200000,  # 2024-01-31
    1715949296789,  # 2024-05-17 12:34:56.789
]


def main(out):
    with open(out, "w") as f:
        i = 0
        for s in STRINGS:
            for t in TIMES:
                row = {
                    "id": i,
                    "s": s,
                    "n": INTS[i % len(INTS)],
                    "d": DECIMALS[i % len(DECIMALS)],
                    "ts": t,
                    "u": None if i % 3 == 0 else STRINGS[(i * 7) % len(STRINGS)],
                }
                # A JSON number for the decimal, written as its text.
                line = json.dumps(row, ensure_ascii=False).replace(
                    json.dumps(row["d"]), row["d"], 1)
                f.write(line + "\n")
                i += 1


if __name__ == "__main__":
    main(sys.argv[1])
