//! The Parquet file sink: result lines become rows of Parquet part files in one directory, with
//! columns typed from the result (exact decimals as Parquet DECIMAL, never a float unless pinned;
//! epoch-ms timestamps as TIMESTAMP(MILLIS, UTC) when pinned; nested values as structs and lists,
//! or JSON text where no one shape holds them). Each shard writes its own files. Under
//! `[checkpoint]` a file is visible only once the checkpoint that covers its rows has committed it
//! (exactly-once, see [`files`]); without checkpoints finished files are published as they roll
//! and at the end of the run (at-least-once: a crash leaves what was rolled). A value that does
//! not fit its column sends its row to the dead letters.

pub mod cells;
pub mod config;
pub mod files;
pub mod nested;
pub mod rows;
mod sink;
pub mod sql;
pub mod writer;

pub use crate::record::columns::ColumnType;
pub use config::ParquetSinkConfig;
pub use sink::ParquetSinkPlan;
pub use writer::{ParquetOut, ParquetShared};

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ParquetSinkError {
    #[error("`{path}`: {err}")]
    Io { path: PathBuf, err: std::io::Error },
    #[error("reading the columns of `{path}`: {message}")]
    Read { path: PathBuf, message: String },
    #[error("encoding Parquet: {message}")]
    Encode { message: String },
}
