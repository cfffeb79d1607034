# The hot-keys benchmark jobs, shared by scripts/bench_hot_keys.sh and scripts/scale_hot_keys.sh:
# the issue's window (count, sum(bid), count_distinct(user_id) per ad per minute) over an NDJSON file,
# or (JOB=group) the same aggregates per ad without a window, a group aggregate whose changelog is
# written as debezium-json.
# Usage (after `source`): hot_keys_job NAME SHARDS MODE DATA DIR  -> writes DIR/NAME.toml, results to
# DIR/out-NAME.ndjson.
hot_keys_job() {
    if [ "${JOB:-window}" = group ]; then
        hot_group_job "$@"
        return
    fi
    cat > "$5/$1.toml" <<TOML
[runtime]
shards = $2

[sources.clicks]
type = "file"
path = "$4"
format = "json"
event_time = { field = "ts", unit = "ms" }
watermark = { max_out_of_orderness = "5s" }

[transforms.clicks_per_minute]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "1m" }
aggregates = { clicks = "count()", spend = "sum(bid)", users = "count_distinct(user_id)" }
hot_keys = { mode = "$3" }

[sinks.counts]
type = "file"
inputs = ["clicks_per_minute"]
path = "$5/out-$1.ndjson"
TOML
}

hot_group_job() {
    cat > "$5/$1.toml" <<TOML
[runtime]
shards = $2

[sources.clicks]
type = "file"
path = "$4"
format = "json"

[transforms.per_ad]
type = "group_aggregate"
inputs = ["clicks"]
group_by = ["ad_id"]
aggregates = { clicks = "count()", spend = "sum(bid)", users = "count_distinct(user_id)" }
hot_keys = { mode = "$3" }

[sinks.totals]
type = "file"
inputs = ["per_ad"]
path = "$5/out-$1.ndjson"
changelog = "debezium-json"
TOML
}
