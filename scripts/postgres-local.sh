#!/usr/bin/env bash
# A local PostgreSQL for the postgres sink's tests and for trying it: installed from the OS
# packages if missing (Debian `postgresql`), run as an unprivileged user on 127.0.0.1 in its own
# data directory, with a database `sluice` owned by a role `sluice` (trust auth, loopback only).
#
# Usage: scripts/postgres-local.sh start|stop|restart|status|url|env|psql ARGS...
#   start    install if needed, init the data dir once, start the server, create the database
#   stop     fast shutdown (clients are disconnected; the data dir is kept)
#   url      the URL the sink's `url` accepts: postgresql://sluice@127.0.0.1:PORT/sluice
#   env      `export SLUICE_PG_URL=...` (eval it)
#   psql     psql against it with the given arguments
# Environment: SLUICE_PG_PORT (default 55432), SLUICE_PG_DIR (default /tmp/sluice-postgres-PORT).
set -euo pipefail

PORT="${SLUICE_PG_PORT:-55432}"
DIR="${SLUICE_PG_DIR:-/tmp/sluice-postgres-$PORT}"
OS_USER="${SLUICE_PG_OS_USER:-sluicepg}"
URL="postgresql://sluice@127.0.0.1:$PORT/sluice"

bin_dir() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    [[ -n "$d" && -x "$d/pg_ctl" ]] && { echo "$d"; return 0; }
    command -v pg_ctl >/dev/null 2>&1 && { dirname "$(command -v pg_ctl)"; return 0; }
    return 1
}

install_if_missing() {
    bin_dir >/dev/null && return 0
    echo "postgres-local: PostgreSQL not found; installing the Debian package postgresql" >&2
    local sudo=""
    if [[ $(id -u) -ne 0 ]]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "postgres-local: installing needs root; run as root, or install the Debian package postgresql" >&2
            exit 1
        fi
        sudo="sudo -n"
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "postgres-local: no apt-get here; install PostgreSQL (initdb, pg_ctl, psql) and rerun" >&2
        exit 1
    fi
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
    bin_dir >/dev/null || { echo "postgres-local: the install left no pg_ctl" >&2; exit 1; }
}

# The server refuses to run as root: as root, run it as an unprivileged system user.
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        id "$OS_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$OS_USER"
        runuser -u "$OS_USER" -- "$@"
    else
        "$@"
    fi
}

running() {
    [[ -f "$DIR/postmaster.pid" ]] && as_owner "$(bin_dir)/pg_ctl" -D "$DIR" status >/dev/null 2>&1
}

start() {
    install_if_missing
    local bin
    bin=$(bin_dir)
    if [[ ! -f "$DIR/PG_VERSION" ]]; then
        mkdir -p "$DIR"
        [[ $(id -u) -eq 0 ]] && { id "$OS_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$OS_USER"; chown "$OS_USER" "$DIR"; }
        chmod 700 "$DIR"
        as_owner "$bin/initdb" -D "$DIR" -U sluice -A trust -E UTF8 --no-locale >"$DIR.init.log" 2>&1 \
            || { cat "$DIR.init.log" >&2; exit 1; }
        cat >>"$DIR/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DIR'
max_connections = 200
EOF
    fi
    if running; then
        echo "postgres-local: already running on 127.0.0.1:$PORT" >&2
    else
        as_owner "$bin/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w -t 60 start >/dev/null \
            || { tail -20 "$DIR/server.log" >&2; exit 1; }
    fi
    if ! "$bin/psql" -h 127.0.0.1 -p "$PORT" -U sluice -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = 'sluice'" | grep -q 1; then
        "$bin/psql" -h 127.0.0.1 -p "$PORT" -U sluice -d postgres -qc "CREATE DATABASE sluice" >/dev/null
    fi
    echo "postgres-local: running on 127.0.0.1:$PORT ($URL), data in $DIR" >&2
}

stop() {
    local bin
    bin=$(bin_dir) || return 0
    if running; then
        as_owner "$bin/pg_ctl" -D "$DIR" -m fast -w stop >/dev/null
        echo "postgres-local: stopped" >&2
    fi
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
    start) start ;;
    stop) stop ;;
    restart) stop; start ;;
    status) if running; then echo "running on 127.0.0.1:$PORT"; else echo "stopped"; exit 3; fi ;;
    url) echo "$URL" ;;
    env) echo "export SLUICE_PG_URL=$URL" ;;
    psql) exec "$(bin_dir)/psql" "$URL" "$@" ;;
    *) echo "usage: $0 start|stop|restart|status|url|env|psql ARGS..." >&2; exit 2 ;;
esac
