//! `[sources.NAME] type = "kafka"`, `[sinks.NAME] type = "kafka"` and the schema registry table
//! Kafka sources and sinks share, as a user writes them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::config_forms::{KafkaStartConfig, KafkaStartName, KafkaStopAt, KafkaStopName};
use crate::config::{EventTimeConfig, WatermarkConfig};
use crate::connectors::csv::{CsvConfig, Format};
use crate::connectors::sink::ChangelogOption;

/// `schema_registry = { url = "http://127.0.0.1:8081", ... }` of an Avro source or sink.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaRegistryConfig {
    /// The Confluent-compatible REST API's base URL.
    pub url: String,
    /// Default `TOPIC-value` (the Confluent TopicNameStrategy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Sources: the reader schema's version (default: the latest when the job starts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// Sinks: an `.avsc` file registered under the subject (default: the subject's latest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_file: Option<std::path::PathBuf>,
    /// HTTP basic authentication (Confluent Cloud: the API key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The password (API secret) from this environment variable...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
    /// ...or from this file (a mounted secret), without its trailing newline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_file: Option<std::path::PathBuf>,
}

/// `[sinks.NAME] type = "kafka"`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KafkaSinkConfig {
    pub inputs: Vec<String>,
    pub brokers: String,
    pub topic: String,
    /// Fields of a result that make its record key (and so its partition); a replay rewrites the
    /// same key. Empty: no key.
    #[serde(default)]
    pub key: Vec<String>,
    #[serde(default)]
    pub delivery: Delivery,
    /// `"json"` (the default): each result line as it is; `"avro"`: Confluent wire-format Avro
    /// with the schema of `schema_registry`.
    #[serde(default)]
    pub format: KafkaSinkFormat,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_registry: Option<SchemaRegistryConfig>,
    /// How an updating result is written: `"append"` (the default: inserts only, or, with `key`,
    /// upserts: a `-U`/`-D` is a tombstone under its key) or `"debezium-json"`.
    #[serde(default, skip_serializing_if = "ChangelogOption::is_append")]
    pub changelog: ChangelogOption,
    /// Record headers from fields: header name -> field (a path, `user.id`) of the result.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Default `sluice-NAME`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transactional_id_prefix: Option<String>,
    /// Passed through to librdkafka as they are.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// librdkafka options whose values come from environment variables (`{ "sasl.password" =
    /// "SLUICE_KAFKA_SASL_PASSWORD" }`), so no secret is written in the TOML.
    #[serde(default)]
    pub options_env: BTreeMap<String, String>,
    /// librdkafka options whose values are the contents of files (a mounted secret), without
    /// the trailing newline.
    #[serde(default)]
    pub options_file: BTreeMap<String, std::path::PathBuf>,
}

/// What a Kafka sink writes as each record's value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KafkaSinkFormat {
    #[default]
    Json,
    Avro,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    #[default]
    AtLeastOnce,
    ExactlyOnce,
}

/// `[sources.NAME] type = "kafka"`: a topic's partitions, spread over the shards.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct KafkaSourceConfig {
    /// `bootstrap.servers`.
    pub brokers: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topics: Option<Vec<String>>,
    /// Read positions are committed to this group for lag monitoring only (checkpoints hold the
    /// positions a restore uses); `start = "committed"` starts from it. Default `sluice-NAME`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// Absent: `"committed"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<KafkaStartConfig>,
    /// `"end"`: stop at the end offsets each partition had when the job started (a bounded job);
    /// `"never"` (the default): keep reading.
    #[serde(default)]
    pub stop_at: KafkaStopAt,
    #[serde(default)]
    pub format: Format,
    /// The CSV layout of `format = "csv"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csv: Option<CsvConfig>,
    /// The registry of `format = "avro"`, and the reader schema's subject and version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_registry: Option<SchemaRegistryConfig>,
    /// Where each record's event time is; left out, the records have none (see the file
    /// source's `event_time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<EventTimeConfig>,
    #[serde(default)]
    pub watermark: WatermarkConfig,
    /// Passed through to librdkafka as they are (`"fetch.max.bytes" = "1048576"`).
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// librdkafka options whose values come from environment variables (`{ "sasl.password" =
    /// "SLUICE_KAFKA_SASL_PASSWORD" }`), so no secret is written in the TOML.
    #[serde(default)]
    pub options_env: BTreeMap<String, String>,
    /// librdkafka options whose values are the contents of files (a mounted secret), without
    /// the trailing newline.
    #[serde(default)]
    pub options_file: BTreeMap<String, std::path::PathBuf>,
    /// At most this many records per second over all partitions (`"50000/s"`): a replay the
    /// sinks can absorb; the rest waits in the topic (lag grows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<String>,
    /// Each record also carries its Kafka metadata as the field `_kafka` (key, headers,
    /// timestamp, partition, offset, topic), for expressions and group-by.
    #[serde(default)]
    pub metadata: bool,
    /// How `_kafka.key` is decoded: `"string"` (the default), `"json"` or `"avro"`.
    #[serde(default)]
    pub key_format: KafkaKeyFormat,
    /// `"upsert"`: the topic is a table's changelog (a compacted topic): each record a new
    /// version of its key, a tombstone (no value) its deletion, for a temporal join's `table`.
    /// `"debezium-json"`: each record a Debezium change, an updating input to what reads it.
    #[serde(default)]
    pub changelog: KafkaChangelog,
}

/// What a Kafka source's records are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KafkaChangelog {
    /// Each record an event; a tombstone is a dead letter.
    #[default]
    Append,
    /// Each record a version of the table row its key names; a tombstone deletes the key.
    Upsert,
    /// Each record a Debezium change (Flink's `debezium-json`): rows inserted, updated and
    /// deleted; a tombstone (which Debezium writes after a delete) changes nothing.
    #[serde(rename = "debezium-json")]
    DebeziumJson,
    /// The same changes in Avro (Flink's `debezium-avro-confluent`): each value Debezium's
    /// envelope in the Confluent wire format, decoded with `schema_registry` (`format = "avro"`,
    /// the subject's latest schema the reader's), then read as `debezium-json`'s.
    #[serde(rename = "debezium-avro")]
    DebeziumAvro,
}

impl KafkaChangelog {
    /// Whether each record is a Debezium change (JSON or Avro).
    pub fn debezium(self) -> bool {
        matches!(
            self,
            KafkaChangelog::DebeziumJson | KafkaChangelog::DebeziumAvro
        )
    }
}

/// How a Kafka record key reaches `_kafka.key`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KafkaKeyFormat {
    /// The key's bytes as a string (bytes that are not UTF-8 become U+FFFD).
    #[default]
    String,
    /// The key as the JSON value it holds (a key that is not JSON: as a string).
    Json,
    /// The key as Confluent wire-format Avro, read with its writer schema from `schema_registry`.
    Avro,
}
