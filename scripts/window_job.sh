# Sourced by the benchmark scripts: the single-window job they all measure (scripts/bench.sh's
# 1-minute tumbling count() + sum(bid) by ad_id over an NDJSON click file), the machine line
# they print, and the timing helpers they share, so every script measures the same job the same way.

# window_job_toml SHARDS DATA OUT [EXTRA]: the job's TOML on stdout, reading DATA, writing OUT,
# with EXTRA (more tables) appended.
window_job_toml() {
    cat <<TOML
[runtime]
shards = $1

[sources.clicks]
type = "file"
path = "$2"
format = "json"
event_time = { field = "ts", unit = "ms" }
watermark = { max_out_of_orderness = "5s", idle_timeout = "30s" }

[transforms.clicks_per_minute]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "1m" }
aggregates = { clicks = "count()", spend = "sum(bid)" }

[sinks.counts]
type = "file"
inputs = ["clicks_per_minute"]
path = "$3"
${4:-}
TOML
}

# machine_line: the core count and CPU model, as every figure is quoted with them.
machine_line() {
    echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || uname -m)"
}

# now: wall-clock seconds, with nanoseconds.
now() { date +%s.%N; }

# median V...: the middle value (the lower of the two middle ones for an even count).
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# rate_of N CMD...: runs CMD and prints N divided by its wall time in seconds.
rate_of() {
    local n=$1 t0
    shift
    t0=$(now)
    "$@"
    python3 -c "print(f'{$n / ($(now) - $t0):.0f}')"
}
