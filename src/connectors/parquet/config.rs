//! `[sinks.NAME] type = "parquet"`: the directory of the part files, when a file rolls, and
//! pinned column types; defaults in `config::defaults`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `[sinks.NAME] type = "parquet"`: part files in the directory `path`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RollConfig {
    #[serde(default = "crate::config::defaults::parquet_roll_rows")]
    pub rows: u64,
}

impl Default for RollConfig {
    fn default() -> Self {
        RollConfig {
            rows: crate::config::defaults::parquet_roll_rows(),
        }
    }
}
