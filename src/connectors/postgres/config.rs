//! `[sinks.NAME] type = "postgres"`: the table a sink upserts into and the limits of its batches,
//! queue and reconnects; defaults in `config::defaults`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::Duration;

/// `[sinks.NAME] type = "postgres"`: upserts into a table (see `connectors::postgres`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PostgresSinkConfig {
    pub inputs: Vec<String>,
    /// `postgresql://user@host:port/db` (libpq URL or key=value form); or `url_env`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The environment variable holding the URL, so no secret need be in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
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
    #[serde(default = "crate::config::defaults::pg_max_in_flight")]
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

impl Default for PostgresSinkConfig {
    /// A table with only its required keys written (`inputs`, `table`, and a URL to set).
    fn default() -> Self {
        PostgresSinkConfig {
            inputs: Vec::new(),
            url: None,
            url_env: None,
            table: String::new(),
            key: Vec::new(),
            create_table: false,
            batch: BatchConfig::default(),
            max_in_flight: crate::config::defaults::pg_max_in_flight(),
            window_ts: WindowTs::default(),
            columns: BTreeMap::new(),
            retry: RetryConfig::default(),
        }
    }
}

/// `batch = { rows = 5000, max_delay = "200ms" }`: a batch is written once it has `rows` rows or
/// its first row has waited `max_delay`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BatchConfig {
    #[serde(default = "crate::config::defaults::pg_batch_rows")]
    pub rows: usize,
    #[serde(default = "crate::config::defaults::pg_batch_max_delay")]
    pub max_delay: Duration,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            rows: crate::config::defaults::pg_batch_rows(),
            max_delay: crate::config::defaults::pg_batch_max_delay(),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowTs {
    /// Epoch milliseconds, as every other sink writes them.
    #[default]
    Bigint,
    Timestamptz,
}

/// `retry = { initial = "100ms", max = "5s", max_retry_time = "60s" }`: reconnect backoff doubles
/// from `initial` up to `max`; past `max_retry_time` without success the job stops.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    #[serde(default = "crate::config::defaults::retry_initial")]
    pub initial: Duration,
    #[serde(default = "crate::config::defaults::retry_max")]
    pub max: Duration,
    #[serde(default = "crate::config::defaults::max_retry_time")]
    pub max_retry_time: Duration,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            initial: crate::config::defaults::retry_initial(),
            max: crate::config::defaults::retry_max(),
            max_retry_time: crate::config::defaults::max_retry_time(),
        }
    }
}
