//! `[sinks.NAME] type = "kafka"` and the schema registry table Kafka sources and sinks share.

use std::collections::BTreeMap;

use serde::Deserialize;

/// `schema_registry = { url = "http://127.0.0.1:8081", ... }` of an Avro source or sink.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaRegistryConfig {
    /// The Confluent-compatible REST API's base URL.
    pub url: String,
    /// Default `TOPIC-value` (the Confluent TopicNameStrategy).
    pub subject: Option<String>,
    /// Sources: the reader schema's version (default: the latest when the job starts).
    pub version: Option<u32>,
    /// Sinks: an `.avsc` file registered under the subject (default: the subject's latest).
    pub schema_file: Option<std::path::PathBuf>,
    /// HTTP basic authentication (Confluent Cloud: the API key).
    pub username: Option<String>,
    /// The password (API secret) from this environment variable...
    pub password_env: Option<String>,
    /// ...or from this file (a mounted secret), without its trailing newline.
    pub password_file: Option<std::path::PathBuf>,
}

/// `[sinks.NAME] type = "kafka"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
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
    pub schema_registry: Option<SchemaRegistryConfig>,
    /// Record headers from fields: header name -> field (a path, `user.id`) of the result.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Default `sluice-NAME`.
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KafkaSinkFormat {
    #[default]
    Json,
    Avro,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    #[default]
    AtLeastOnce,
    ExactlyOnce,
}
