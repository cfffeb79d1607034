# shellcheck shell=bash
# Process handling shared by the local-service scripts (kafka-local.sh, registry-local.sh), after
# `source`, with the caller's `say` defined: whether our process runs, whether a port answers, and
# a stop that waits for the process and kills it after a timeout.

# service_pid PIDFILE MARK: prints the pid and succeeds only if that process is alive and its
# command line contains MARK (a fixed string), so a recycled pid is never taken for ours.
service_pid() {
    local pid
    [ -f "$1" ] || return 1
    pid="$(cat "$1")"
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF "$2" || return 1
    echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# service_stop PIDFILE MARK WHAT TIMEOUT_S: TERM, wait up to TIMEOUT_S, then KILL; removes PIDFILE.
service_stop() {
    local pid i
    if ! pid="$(service_pid "$1" "$2")"; then
        rm -f "$1"
        say "not running"
        return 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < $4 * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        say "$3 did not stop in ${4}s, killing it"
        kill -KILL "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    fi
    rm -f "$1"
    say "stopped"
}
