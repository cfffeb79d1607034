//! Validation of `[sources.NAME] type = "kafka"` into a [`KafkaPlan`]: its topics, where it
//! starts and stops, its record format and metadata, and an upsert changelog's constraints.

use super::avro_plan::AvroCheck;
use super::config::{
    KafkaSourceConfig, KafkaStartConfig, KafkaStartName, KafkaStopAt, KafkaStopName,
};
use super::options::kafka_options;
use crate::config::KeyPath;
use crate::connectors::check::Check;

/// `[sources.NAME] type = "kafka"`, validated (see [`super::source`]).
#[derive(Debug, Clone, PartialEq)]
pub struct KafkaPlan {
    pub brokers: String,
    pub topics: Vec<String>,
    pub group_id: String,
    pub start: KafkaStart,
    /// Stop at the end offsets taken when the job first started.
    pub stop_at_end: bool,
    /// Stop before the first record whose Kafka timestamp is at or after this (epoch ms), as the
    /// offsets stood when the job first started.
    pub stop_at_time: Option<i64>,
    /// The record's Kafka timestamp is its event time.
    pub kafka_timestamp: bool,
    pub options: std::collections::BTreeMap<String, String>,
    /// Records carry their metadata as `_kafka`, the key decoded so (`None`: they do not).
    pub metadata: Option<super::config::KafkaKeyFormat>,
    /// `changelog = "upsert"`: tombstones become deletion rows of their key (see
    /// `super::meta::tombstone`), written with the event-time field named here (`None`:
    /// the event time is the Kafka timestamp).
    pub upsert: Option<Option<String>>,
    /// `changelog = "debezium-json"`: each record a Debezium change, read as its rows.
    pub debezium: bool,
    /// `format = "avro"`: the registry and the reader schema.
    pub avro: Option<super::avro::AvroSourcePlan>,
    /// `key_format = "avro"`: the registry the keys' writer schemas come from.
    pub avro_key: Option<super::avro::RegistryPlan>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KafkaStart {
    Committed,
    Earliest,
    Latest,
    /// Epoch ms.
    Timestamp(i64),
    /// Per partition: (topic, partition, offset); the others as `Committed`.
    Offsets(Vec<(String, i32, i64)>),
}

/// The plan of the Kafka source `cx` checks.
pub(super) fn kafka_plan(cx: &mut Check<'_>, k: &KafkaSourceConfig) -> KafkaPlan {
    let name = cx.name;
    let key = |k: &str| KeyPath::new(["sources", name, k]);
    if k.brokers.trim().is_empty() {
        cx.err(
            key("brokers"),
            "the broker list cannot be empty (e.g. \"127.0.0.1:9092\")".into(),
        );
    }
    let topics = match (&k.topic, &k.topics) {
        (Some(t), None) => vec![t.clone()],
        (None, Some(ts)) if !ts.is_empty() => ts.clone(),
        (Some(_), Some(_)) => {
            cx.err(key("topics"), "give `topic` or `topics`, not both".into());
            Vec::new()
        }
        _ => {
            cx.err(
                key("topic"),
                "a Kafka source needs `topic = \"NAME\"` or `topics = [...]`".into(),
            );
            Vec::new()
        }
    };
    if topics.iter().any(|t| t.trim().is_empty()) {
        cx.err(key("topics"), "a topic name cannot be empty".into());
    }
    let start = match &k.start {
        None | Some(KafkaStartConfig::Named(KafkaStartName::Committed)) => KafkaStart::Committed,
        Some(KafkaStartConfig::Named(KafkaStartName::Earliest)) => KafkaStart::Earliest,
        Some(KafkaStartConfig::Named(KafkaStartName::Latest)) => KafkaStart::Latest,
        Some(KafkaStartConfig::Timestamp { timestamp }) => {
            match crate::record::json::parse_rfc3339_ms(timestamp.as_bytes()) {
                Some(ms) => KafkaStart::Timestamp(ms),
                None => {
                    cx.err(
                        key("start"),
                        format!(
                            "`{timestamp}` is not an RFC 3339 time, e.g. \"2026-11-01T00:00:00Z\""
                        ),
                    );
                    KafkaStart::Earliest
                }
            }
        }
        Some(KafkaStartConfig::Offsets { offsets }) => {
            KafkaStart::Offsets(start_offsets(cx, &topics, offsets))
        }
    };
    let stop_at_time = match &k.stop_at {
        KafkaStopAt::Timestamp { timestamp } => {
            let ms = crate::record::json::parse_rfc3339_ms(timestamp.as_bytes());
            if ms.is_none() {
                cx.err(
                    key("stop_at"),
                    format!("`{timestamp}` is not an RFC 3339 time, e.g. \"2026-11-02T00:00:00Z\""),
                );
            }
            ms
        }
        _ => None,
    };
    let avro = cx.avro_source(k, &topics);
    let avro_key = cx.avro_key(k);
    let options = kafka_options(cx, &k.options, &k.options_env, &k.options_file);
    let upsert = upsert(cx, k);
    use super::config::KafkaChangelog;
    use crate::connectors::csv::Format;
    match (k.changelog, k.format) {
        (KafkaChangelog::DebeziumJson, f) if f != Format::Json || k.metadata => {
            cx.err(key("changelog"), "changelog = \"debezium-json\" reads JSON values (Debezium's envelope): leave format as \"json\" and metadata off (for Avro envelopes: changelog = \"debezium-avro\" with format = \"avro\")".into());
        }
        (KafkaChangelog::DebeziumAvro, f) if f != Format::Avro || k.metadata => {
            cx.err(key("changelog"), "changelog = \"debezium-avro\" reads Avro values (Debezium's envelope through the schema registry): set format = \"avro\" with its schema_registry, and leave metadata off".into());
        }
        _ => {}
    }
    KafkaPlan {
        brokers: k.brokers.clone(),
        topics,
        group_id: k
            .group_id
            .clone()
            .unwrap_or_else(|| format!("sluice-{name}")),
        start,
        stop_at_end: k.stop_at == KafkaStopAt::Named(KafkaStopName::End),
        stop_at_time,
        kafka_timestamp: k.event_time.as_ref().is_some_and(|e| e.kafka_timestamp),
        options,
        metadata: k.metadata.then_some(k.key_format),
        upsert,
        debezium: k.changelog.debezium(),
        avro,
        avro_key,
    }
}

/// `changelog = "upsert"`: tombstones carry their key's fields and an event time, so the key
/// must be a JSON object and the time a top-level epoch-ms field or the Kafka timestamp.
fn upsert(cx: &mut Check<'_>, k: &KafkaSourceConfig) -> Option<Option<String>> {
    use super::config::{KafkaChangelog, KafkaKeyFormat};
    use crate::config::TimeUnitConfig;
    let name = cx.name;
    if k.changelog != KafkaChangelog::Upsert {
        return None;
    }
    let key = |k: &str| KeyPath::new(["sources", name, k]);
    if !matches!(k.key_format, KafkaKeyFormat::Json | KafkaKeyFormat::Avro) {
        cx.err(key("key_format"), "changelog = \"upsert\" reads the table key from the record key: set key_format = \"json\" (a JSON object of the key fields) or \"avro\" (a record)".into());
    }
    let Some(et) = &k.event_time else {
        cx.err(key("event_time"), "changelog = \"upsert\" keeps the last row per key in event time (a versioned table): give the source an event_time (a top-level epoch-ms field, or kafka_timestamp = true)".into());
        return Some(None);
    };
    if et.kafka_timestamp {
        return Some(None);
    }
    if et.field.contains('.') || et.unit != TimeUnitConfig::Ms {
        cx.err(key("event_time"), "a tombstone has no value to read its time from: with changelog = \"upsert\" the event time must be a top-level epoch-ms field (it is then taken from the Kafka timestamp for tombstones) or kafka_timestamp = true".into());
    }
    Some(Some(et.field.clone()))
}

/// `start = { offsets = { "N" | "TOPIC/N" = OFFSET } }` as (topic, partition, offset).
fn start_offsets(
    cx: &mut Check<'_>,
    topics: &[String],
    offsets: &std::collections::BTreeMap<String, i64>,
) -> Vec<(String, i32, i64)> {
    let name = cx.name;
    let mut out = Vec::new();
    for (p, &offset) in offsets {
        let at = KeyPath::new(["sources", name, "start", "offsets", p]);
        let (topic, n) = match p.rsplit_once('/') {
            Some((t, n)) => (Some(t.to_string()), n),
            None => (
                topics.first().filter(|_| topics.len() == 1).cloned(),
                p.as_str(),
            ),
        };
        let Some(topic) = topic else {
            cx.err(
                at,
                format!(
                    "`{p}`: this source reads several topics; name the partition as \"TOPIC/{p}\""
                ),
            );
            continue;
        };
        if !topics.contains(&topic) {
            cx.err(at, format!("`{topic}` is not a topic of this source"));
            continue;
        }
        match n.parse::<i32>() {
            Ok(n) if n >= 0 && offset >= 0 => out.push((topic, n, offset)),
            Ok(_) if offset < 0 => cx.err(at, format!("offset {offset} is negative")),
            _ => cx.err(at, format!("`{n}` is not a partition number")),
        }
    }
    out
}
