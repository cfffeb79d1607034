//! `[sinks.NAME]` tables: one typed struct per sink kind, each denying unknown keys; defaults in
//! [`super::defaults`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::{defaults, Duration};

/// `[sinks.NAME]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SinkConfig {
    File(FileSinkConfig),
    Stdout(StdoutSinkConfig),
    Kafka(KafkaSinkConfig),
    Postgres(PostgresSinkConfig),
    Parquet(ParquetSinkConfig),
}

impl SinkConfig {
    pub fn inputs(&self) -> &[String] {
        match self {
            SinkConfig::File(f) => &f.inputs,
            SinkConfig::Stdout(s) => &s.inputs,
            SinkConfig::Kafka(k) => &k.inputs,
            SinkConfig::Postgres(p) => &p.inputs,
            SinkConfig::Parquet(p) => &p.inputs,
        }
    }
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
    pub schema_registry: Option<super::SchemaRegistryConfig>,
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

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSinkConfig {
    pub inputs: Vec<String>,
    pub path: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StdoutSinkConfig {
    pub inputs: Vec<String>,
}

/// `[sinks.NAME] type = "postgres"`: upserts into a table (see `sinks::postgres`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostgresSinkConfig {
    pub inputs: Vec<String>,
    /// `postgresql://user@host:port/db` (libpq URL or key=value form); or `url_env`.
    pub url: Option<String>,
    /// The environment variable holding the URL, so no secret need be in the file.
    pub url_env: Option<String>,
    /// `name` or `schema.name`.
    pub table: String,
    /// The result fields an upsert is keyed on (`ON CONFLICT (key) DO UPDATE`); empty: plain
    /// inserts (at-least-once: a replay inserts its rows again).
    #[serde(default)]
    pub key: Vec<String>,
    /// `CREATE TABLE IF NOT EXISTS` from the result's columns (with `key` as primary key).
    #[serde(default)]
    pub create_table: bool,
    #[serde(default)]
    pub batch: BatchConfig,
    /// Batches a shard may have queued for its connection before it stops getting credit.
    #[serde(default = "defaults::pg_max_in_flight")]
    pub max_in_flight: usize,
    /// How `window_start`/`window_end` are typed when the sink creates the table.
    #[serde(default)]
    pub window_ts: WindowTs,
    /// Column types pinned by name (`"bigint"`, `"decimal(18,2)"`, `"timestamp"`, ...), for
    /// columns the first rows would type otherwise.
    #[serde(default)]
    pub columns: BTreeMap<String, String>,
    #[serde(default)]
    pub retry: RetryConfig,
}

/// `batch = { rows = 5000, max_delay = "200ms" }`: a batch is written once it has `rows` rows or
/// its first row has waited `max_delay`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchConfig {
    #[serde(default = "defaults::pg_batch_rows")]
    pub rows: usize,
    #[serde(default = "defaults::pg_batch_max_delay")]
    pub max_delay: Duration,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            rows: defaults::pg_batch_rows(),
            max_delay: defaults::pg_batch_max_delay(),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowTs {
    /// Epoch milliseconds, as every other sink writes them.
    #[default]
    Bigint,
    Timestamptz,
}

/// `retry = { initial = "100ms", max = "5s", max_retry_time = "60s" }`: reconnect backoff doubles
/// from `initial` up to `max`; past `max_retry_time` without success the job stops.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    #[serde(default = "defaults::retry_initial")]
    pub initial: Duration,
    #[serde(default = "defaults::retry_max")]
    pub max: Duration,
    #[serde(default = "defaults::max_retry_time")]
    pub max_retry_time: Duration,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            initial: defaults::retry_initial(),
            max: defaults::retry_max(),
            max_retry_time: defaults::max_retry_time(),
        }
    }
}

/// `[sinks.NAME] type = "parquet"`: part files in the directory `path`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParquetSinkConfig {
    pub inputs: Vec<String>,
    pub path: PathBuf,
    /// When a part file is finished and the next one started (besides every checkpoint).
    #[serde(default)]
    pub roll: RollConfig,
    /// Pinned column types by column name (`"decimal(18,2)"`, `"timestamp"`, ...); the others
    /// are inferred from the first rows.
    #[serde(default)]
    pub columns: BTreeMap<String, String>,
}

/// `roll = { rows = N }` of a Parquet sink.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RollConfig {
    #[serde(default = "defaults::parquet_roll_rows")]
    pub rows: u64,
}

impl Default for RollConfig {
    fn default() -> Self {
        RollConfig {
            rows: defaults::parquet_roll_rows(),
        }
    }
}
