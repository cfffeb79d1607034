//! Flink's `kafka` and `upsert-kafka` connectors as sluice's Kafka source and sink, with their
//! formats (`json`, `csv`, and `avro-confluent`: the Confluent wire format through a Schema
//! Registry, `avro-confluent.url`, `avro-confluent.subject`; read, also the changelog formats
//! `debezium-json` and `debezium-avro-confluent`, Debezium's envelope in JSON or in Avro through
//! the registry, `debezium-avro-confluent.url`). An `upsert-kafka` table is a keyed
//! changelog: read, it is a versioned table (sluice's `changelog = "upsert"` source: each record
//! a new version of its key, a tombstone its deletion, from the earliest offset as Flink reads
//! it); written, each row is keyed by the table's PRIMARY KEY (a JSON object of its columns), so a
//! compacted topic keeps the last row per key. Keys and values are JSON, the value holding every
//! column (`value.fields-include` = `ALL`, Flink's default).

use std::collections::BTreeMap;

use crate::connectors::sink::ChangelogOption;

use super::config::{
    Delivery, KafkaChangelog, KafkaKeyFormat, KafkaSinkConfig, KafkaSinkFormat, KafkaSourceConfig,
    KafkaStartConfig, KafkaStartName, KafkaStopAt, KafkaStopName, SchemaRegistryConfig,
};
use crate::connectors::csv::{self, Format};
use crate::connectors::{SinkConfig, SourceConfig};
use crate::sql::ddl::Table;
use crate::sql::options::{
    check_json_options, format_options, option_error, refuse_unknown, required, time_tables,
    unsupported_format, EventTime, JSON_OPTIONS,
};
use crate::sql::SqlError;

/// `avro-confluent` (or `debezium-avro-confluent`, whose options carry its name): the registry
/// its schemas come from.
fn registry(t: &Table) -> Result<SchemaRegistryConfig, SqlError> {
    let format = t.option("format").unwrap_or("avro-confluent");
    let Some(url) = t.option(&format!("{format}.url")) else {
        return Err(SqlError::span(
            t.span,
            format!("table `{}`: format '{format}' needs the option '{format}.url' (the Schema Registry)", t.name),
        ));
    };
    Ok(SchemaRegistryConfig {
        url: url.to_string(),
        subject: t.option(&format!("{format}.subject")).map(str::to_string),
        ..SchemaRegistryConfig::default()
    })
}

/// A `kafka` table read by a query.
pub fn source(
    t: &Table,
    time: Option<&EventTime>,
    idle_ms: Option<i64>,
) -> Result<SourceConfig, SqlError> {
    let known: Vec<&str> = [
        "connector",
        "format",
        "topic",
        "scan.startup.mode",
        "scan.startup.timestamp-millis",
        "scan.startup.specific-offsets",
        "scan.bounded.mode",
        "scan.bounded.timestamp-millis",
    ]
    .iter()
    .chain(format_options(t))
    .copied()
    .collect();
    refuse_unknown(t, &known, Some("properties."))?;
    let (format, csv, schema_registry) = match t.option("format") {
        Some("json") => {
            check_json_options(t)?;
            (Format::Json, None, None)
        }
        Some("csv") => {
            let (f, c) = csv::sql::format(t)?;
            (f, c, None)
        }
        Some("avro-confluent" | "debezium-avro-confluent") => {
            (Format::Avro, None, Some(registry(t)?))
        }
        Some("debezium-json") => (Format::Json, None, None),
        _ => {
            return Err(unsupported_format(
                t,
                "'json', 'csv', 'avro-confluent', 'debezium-json', 'debezium-avro-confluent'",
            ))
        }
    };
    let changelog = match t.option("format") {
        Some("debezium-json") => KafkaChangelog::DebeziumJson,
        Some("debezium-avro-confluent") => KafkaChangelog::DebeziumAvro,
        _ => KafkaChangelog::Append,
    };
    let brokers = required(t, "properties.bootstrap.servers")?.to_string();
    let topic = required(t, "topic")?;
    let (topic, topics) = match topic.contains(';') {
        true => (None, Some(topic.split(';').map(str::to_string).collect())),
        false => (Some(topic.to_string()), None),
    };
    let start = startup(t)?;
    let stop_at = match t.option("scan.bounded.mode") {
        None | Some("unbounded") => KafkaStopAt::Never,
        Some("latest-offset") => KafkaStopAt::Named(KafkaStopName::End),
        Some("timestamp") => KafkaStopAt::Timestamp {
            timestamp: millis_option(t, "scan.bounded.timestamp-millis")?,
        },
        Some(other) => {
            return Err(option_error(
                t,
                "scan.bounded.mode",
                format!("'{other}' is not supported yet (supported: 'latest-offset', 'timestamp', 'unbounded')"),
            ));
        }
    };
    let (event_time, watermark) = time_tables(t, time, idle_ms)?;
    Ok(SourceConfig::Kafka(Box::new(KafkaSourceConfig {
        brokers,
        topic,
        topics,
        group_id: t.option("properties.group.id").map(str::to_string),
        start: Some(start),
        stop_at,
        format,
        csv,
        schema_registry,
        event_time,
        watermark,
        options: properties(t, &["properties.bootstrap.servers", "properties.group.id"]),
        changelog,
        ..KafkaSourceConfig::default()
    })))
}

/// `scan.startup.mode` (with its timestamp or offsets) as the source's `start`.
fn startup(t: &Table) -> Result<KafkaStartConfig, SqlError> {
    Ok(match t.option("scan.startup.mode") {
        None | Some("group-offsets") => KafkaStartConfig::Named(KafkaStartName::Committed),
        Some("earliest-offset") => KafkaStartConfig::Named(KafkaStartName::Earliest),
        Some("latest-offset") => KafkaStartConfig::Named(KafkaStartName::Latest),
        Some("timestamp") => KafkaStartConfig::Timestamp {
            timestamp: millis_option(t, "scan.startup.timestamp-millis")?,
        },
        Some("specific-offsets") => KafkaStartConfig::Offsets {
            offsets: specific_offsets(t)?,
        },
        Some(other) => {
            return Err(option_error(t, "scan.startup.mode", format!("'{other}' is not supported (supported: 'earliest-offset', 'latest-offset', 'group-offsets', 'timestamp', 'specific-offsets')")));
        }
    })
}

/// `scan.startup.specific-offsets`: `partition:0,offset:42;partition:1,offset:300`.
fn specific_offsets(t: &Table) -> Result<BTreeMap<String, i64>, SqlError> {
    let key = "scan.startup.specific-offsets";
    let text = required(t, key)?;
    let mut offsets = BTreeMap::new();
    for part in text.split(';').filter(|p| !p.trim().is_empty()) {
        let mut p = None;
        let mut o = None;
        for kv in part.split(',') {
            match kv.trim().split_once(':') {
                Some(("partition", v)) => p = v.trim().parse::<u32>().ok(),
                Some(("offset", v)) => o = v.trim().parse::<i64>().ok().filter(|o| *o >= 0),
                _ => {}
            }
        }
        let (Some(p), Some(o)) = (p, o) else {
            return Err(option_error(
                t,
                key,
                format!("`{part}`: expected partition:N,offset:M"),
            ));
        };
        offsets.insert(p.to_string(), o);
    }
    Ok(offsets)
}

/// An epoch-milliseconds option as RFC 3339 text, as the source's timestamps are written.
fn millis_option(t: &Table, key: &str) -> Result<String, SqlError> {
    let text = required(t, key)?;
    text.trim()
        .parse::<i64>()
        .ok()
        .and_then(crate::expr::rfc3339)
        .ok_or_else(|| option_error(t, key, format!("'{text}' is not epoch milliseconds")))
}

/// `properties.*` other than the ones mapped to keys of their own, as librdkafka `options`.
fn properties(t: &Table, mapped: &[&str]) -> BTreeMap<String, String> {
    t.options
        .iter()
        .filter(|(k, _)| k.starts_with("properties.") && !mapped.contains(&k.as_str()))
        .map(|(k, (v, _))| (k["properties.".len()..].to_string(), v.clone()))
        .collect()
}

/// A `kafka` table written by `INSERT INTO`.
pub fn sink(t: &Table) -> Result<SinkConfig, SqlError> {
    let known: Vec<&str> = [
        "connector",
        "format",
        "topic",
        "sink.delivery-guarantee",
        "sink.transactional-id-prefix",
    ]
    .iter()
    .chain(if t.option("format") == Some("avro-confluent") {
        format_options(t)
    } else {
        &[]
    })
    .copied()
    .collect();
    refuse_unknown(t, &known, Some("properties."))?;
    let mut changelog = ChangelogOption::Append;
    let (format, schema_registry) = match t.option("format") {
        Some("json") => {
            check_json_options(t)?;
            (KafkaSinkFormat::Json, None)
        }
        Some("debezium-json") => {
            changelog = ChangelogOption::DebeziumJson;
            (KafkaSinkFormat::Json, None)
        }
        Some("avro-confluent") => (KafkaSinkFormat::Avro, Some(registry(t)?)),
        _ => {
            return Err(unsupported_format(
                t,
                "'json', 'debezium-json', 'avro-confluent'",
            ))
        }
    };
    let brokers = required(t, "properties.bootstrap.servers")?.to_string();
    let topic = required(t, "topic")?.to_string();
    let (delivery, transactional_id_prefix) = delivery(t)?;
    Ok(SinkConfig::Kafka(KafkaSinkConfig {
        brokers,
        topic,
        format,
        schema_registry,
        changelog,
        delivery,
        transactional_id_prefix,
        options: properties(t, &["properties.bootstrap.servers"]),
        ..KafkaSinkConfig::default()
    }))
}

/// `sink.delivery-guarantee` and `sink.transactional-id-prefix`.
fn delivery(t: &Table) -> Result<(Delivery, Option<String>), SqlError> {
    let delivery = match t.option("sink.delivery-guarantee") {
        None | Some("at-least-once") | Some("none") => Delivery::AtLeastOnce,
        Some("exactly-once") => Delivery::ExactlyOnce,
        Some(other) => {
            return Err(option_error(t, "sink.delivery-guarantee", format!("'{other}' is not a delivery guarantee (expected 'exactly-once', 'at-least-once' or 'none')")));
        }
    };
    Ok((
        delivery,
        t.option("sink.transactional-id-prefix").map(str::to_string),
    ))
}

/// The JSON key and value formats, every column in the value: what sluice's Kafka sources and
/// sinks read and write.
fn check_upsert_formats(t: &Table) -> Result<(), SqlError> {
    for key in ["key.format", "value.format"] {
        match t.option(key) {
            Some("json") => {}
            Some(other) => {
                return Err(option_error(
                    t,
                    key,
                    format!("'{other}' is not supported yet (supported: 'json')"),
                ))
            }
            None => {
                return Err(SqlError::span(
                    t.span,
                    format!("table `{}` needs the option '{key}' (= 'json')", t.name),
                ))
            }
        }
    }
    match t.option("value.fields-include") {
        None | Some("ALL") => {}
        Some(_) => {
            return Err(option_error(
                t,
                "value.fields-include",
                "only 'ALL' is supported: the value holds every column".into(),
            ))
        }
    }
    if t.primary_key.is_empty() {
        return Err(SqlError::span(t.span, format!("table `{}`: an upsert-kafka table needs a PRIMARY KEY (...) NOT ENFORCED: its record key", t.name)));
    }
    Ok(())
}

/// An `upsert-kafka` table read by a query: a versioned table.
pub fn upsert_source(
    t: &Table,
    time: Option<&EventTime>,
    idle_ms: Option<i64>,
) -> Result<SourceConfig, SqlError> {
    let known = [
        "connector",
        "topic",
        "key.format",
        "value.format",
        "value.fields-include",
        "scan.bounded.mode",
        JSON_OPTIONS[0],
        JSON_OPTIONS[1],
    ];
    refuse_unknown(t, &known, Some("properties."))?;
    check_upsert_formats(t)?;
    check_json_options(t)?;
    let brokers = required(t, "properties.bootstrap.servers")?.to_string();
    let topic = required(t, "topic")?.to_string();
    let stop_at = match t.option("scan.bounded.mode") {
        None | Some("unbounded") => KafkaStopAt::Never,
        Some("latest-offset") => KafkaStopAt::Named(KafkaStopName::End),
        Some(other) => {
            return Err(option_error(
                t,
                "scan.bounded.mode",
                format!("'{other}' is not supported yet (supported: 'unbounded', 'latest-offset')"),
            ))
        }
    };
    let (event_time, watermark) = time_tables(t, time, idle_ms)?;
    Ok(SourceConfig::Kafka(Box::new(KafkaSourceConfig {
        brokers,
        topic: Some(topic),
        group_id: t.option("properties.group.id").map(str::to_string),
        start: Some(KafkaStartConfig::Named(KafkaStartName::Earliest)),
        stop_at,
        format: Format::Json,
        event_time,
        watermark,
        options: properties(t, &["properties.bootstrap.servers", "properties.group.id"]),
        key_format: KafkaKeyFormat::Json,
        changelog: KafkaChangelog::Upsert,
        ..KafkaSourceConfig::default()
    })))
}

/// An `upsert-kafka` table written by `INSERT INTO`: each row keyed by the PRIMARY KEY.
pub fn upsert_sink(t: &Table) -> Result<SinkConfig, SqlError> {
    let known = [
        "connector",
        "topic",
        "key.format",
        "value.format",
        "value.fields-include",
        "sink.delivery-guarantee",
        "sink.transactional-id-prefix",
    ];
    refuse_unknown(t, &known, Some("properties."))?;
    check_upsert_formats(t)?;
    let brokers = required(t, "properties.bootstrap.servers")?.to_string();
    let topic = required(t, "topic")?.to_string();
    let (delivery, transactional_id_prefix) = delivery(t)?;
    Ok(SinkConfig::Kafka(KafkaSinkConfig {
        brokers,
        topic,
        key: t.primary_key.clone(),
        delivery,
        transactional_id_prefix,
        options: properties(t, &["properties.bootstrap.servers"]),
        ..KafkaSinkConfig::default()
    }))
}

/// `sluice export flink`: the jar every Kafka table needs on a cluster.
const FLINK_JAR: &str = "Kafka tables need the connector jar on the cluster's class path (`flink-sql-connector-kafka` for Flink 2.x, in `$FLINK_HOME/lib` or `ADD JAR`).";
/// ... and an `avro-confluent` or `debezium-avro-confluent` table's format.
const FLINK_AVRO: &str = "`avro-confluent` and `debezium-avro-confluent` tables need `flink-sql-avro-confluent-registry` on the class path.";
/// ... and what an exactly-once sink needs.
const FLINK_EXACTLY_ONCE: &str = "Exactly-once Kafka sinks (`sink.delivery-guarantee` = `exactly-once`) need checkpoints and a `sink.transactional-id-prefix` unique per job, and consumers reading `read_committed`, as in sluice.";

/// What `sluice export flink` notes for a Kafka source.
pub fn flink_source_notes(c: &KafkaSourceConfig) -> Vec<&'static str> {
    let mut notes = vec![FLINK_JAR];
    if c.format == Format::Avro {
        notes.push(FLINK_AVRO);
    }
    notes
}

/// What `sluice export flink` notes for a Kafka sink.
pub fn flink_sink_notes(c: &KafkaSinkConfig) -> Vec<&'static str> {
    let mut notes = vec![FLINK_JAR];
    if c.format == KafkaSinkFormat::Avro {
        notes.push(FLINK_AVRO);
    }
    if c.delivery == Delivery::ExactlyOnce {
        notes.push(FLINK_EXACTLY_ONCE);
    }
    notes
}
