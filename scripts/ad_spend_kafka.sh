#!/usr/bin/env bash
# Runs config/ad_spend_kafka.toml on the local broker: makes the ad-spend inputs with
# `sluice loadgen flow` (EVENTS impressions, default 1 000 000), creates the topics flow-impressions,
# flow-clicks and flow-prices (PARTITIONS each, default 3) and ad-spend, produces the files into
# them, and runs the job (results in the topic ad-spend, exactly once). Needs the broker of
# scripts/kafka-local.sh (started here if it is not running).
#
# Usage: scripts/ad_spend_kafka.sh        (EVENTS=100000 PARTITIONS=1 scripts/ad_spend_kafka.sh)
set -euo pipefail

cd "$(dirname "$0")/.."
EVENTS="${EVENTS:-1000000}"
PARTITIONS="${PARTITIONS:-3}"
TARGET="${CARGO_TARGET_DIR:-target}"
BROKERS="127.0.0.1:${SLUICE_KAFKA_PORT:-9092}"

cargo build --release --quiet
bash scripts/kafka-local.sh start
"$TARGET/release/sluice" loadgen flow --events "$EVENTS" --out data
# Fresh topics each run: the job reads them from the earliest offset, so old records would count
# twice. Deletion is asynchronous: wait until the broker no longer lists them.
topics="flow-impressions flow-clicks flow-prices ad-spend"
for t in $topics; do
    bash scripts/kafka-local.sh run org.apache.kafka.tools.TopicCommand --bootstrap-server "$BROKERS" \
        --delete --if-exists --topic "$t" >/dev/null 2>&1 || true
done
for _ in $(seq 1 60); do
    listed=$(bash scripts/kafka-local.sh run org.apache.kafka.tools.TopicCommand \
        --bootstrap-server "$BROKERS" --list 2>/dev/null | grep -cE '^(flow-|ad-spend$)' || true)
    [ "$listed" = "0" ] && break
    sleep 1
done
for t in $topics; do
    bash scripts/kafka-local.sh topic "$t" "$PARTITIONS"
done
for pair in impressions:flow-impressions clicks:flow-clicks prices:flow-prices; do
    file="data/flow_${pair%%:*}.ndjson"
    topic="${pair##*:}"
    echo "ad_spend_kafka: producing $file into $topic"
    bash scripts/kafka-local.sh run org.apache.kafka.tools.ConsoleProducer \
        --bootstrap-server "$BROKERS" --topic "$topic" < "$file"
done
rm -rf state/ad_spend_kafka
"$TARGET/release/sluice" run --config config/ad_spend_kafka.toml
echo "ad_spend_kafka: results are in the topic ad-spend (read it with isolation.level=read_committed)"
