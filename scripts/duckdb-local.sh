#!/usr/bin/env bash
# DuckDB for reading the Parquet sink's files back (tests, trying it out), through its Python
# package: `ensure` installs it with pip when `python3 -c "import duckdb"` fails; `query SQL`
# runs one statement and prints its rows as tab-separated fields under a header line (NULL as an
# empty field; decimals keep every digit of their scale); `version` prints DuckDB's version.
set -euo pipefail

py=${PYTHON:-python3}

have() { "$py" -c 'import duckdb' >/dev/null 2>&1; }

case "${1:-}" in
ensure)
    if have; then exit 0; fi
    if ! command -v "$py" >/dev/null 2>&1; then
        echo "duckdb-local.sh: $py not found; install Python 3 and pip" >&2
        exit 1
    fi
    # A Debian system Python refuses plain installs (PEP 668): retry as the OS allows.
    "$py" -m pip install --quiet --disable-pip-version-check duckdb >&2 \
        || "$py" -m pip install --quiet --disable-pip-version-check --break-system-packages duckdb >&2 \
        || "$py" -m pip install --quiet --disable-pip-version-check --user duckdb >&2
    have || { echo "duckdb-local.sh: the duckdb package did not install" >&2; exit 1; }
    ;;
query)
    [ $# -eq 2 ] || { echo "usage: duckdb-local.sh query SQL" >&2; exit 2; }
    "$py" - "$2" <<'PY'
import sys, duckdb
con = duckdb.connect()
cur = con.execute(sys.argv[1])
print("\t".join(d[0] for d in cur.description))
for row in cur.fetchall():
    print("\t".join("" if v is None else str(v) for v in row))
PY
    ;;
version)
    "$py" -c 'import duckdb; print(duckdb.__version__)'
    ;;
*)
    echo "usage: duckdb-local.sh ensure | query SQL | version" >&2
    exit 2
    ;;
esac
