//! Sources: where events come from, cut into chunks that any shard can read on its own.
//!
//! A source has partitions (each file of a glob; the generator has one). A partition is cut into
//! chunks (`chunk_bytes` of a file, `chunk_bytes / 64` click generator indices, `chunk_bytes /
//! 190` Nexmark event numbers) so that several shards can parse one large file in parallel;
//! `runtime::schedule` fixes the global order of chunks. This module knows formats and files,
//! never operators, rings or threads.

pub mod csv;
pub mod file;
pub mod generator;
pub mod kafka;
pub mod kafka_discover;
pub mod kafka_meta;
mod uring_read;

use crate::plan::{GeneratorPlan, Plan, SourceKind};
use generator::model::ClickModel;
use std::path::PathBuf;
use std::sync::Arc;

/// Bytes of one generated event, for sizing generator chunks like file chunks.
pub const GENERATED_EVENT_BYTES: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("source `{source_name}`: invalid path pattern `{pattern}`: {message}")]
    Pattern {
        source_name: String,
        pattern: String,
        message: String,
    },
    #[error("source `{source_name}`: no file matches `{pattern}`")]
    NoMatch {
        source_name: String,
        pattern: String,
    },
    #[error("source `{source_name}`: cannot open `{path}`: {err}")]
    Open {
        source_name: String,
        path: PathBuf,
        err: std::io::Error,
    },
    #[error("source `{source_name}`: {message}")]
    Config {
        source_name: String,
        message: String,
    },
    #[error(transparent)]
    Kafka(#[from] kafka::DiscoveryError),
    #[error("more than {max} partitions in total ({found})")]
    TooManyPartitions { max: usize, found: usize },
}

#[derive(Debug, Clone)]
pub enum PartKind {
    File {
        path: PathBuf,
        size: u64,
    },
    Generator {
        model: Arc<ClickModel>,
        per_chunk: u64,
        count: Option<u64>,
    },
    /// A Nexmark table: chunks are ranges of Nexmark event numbers, of which only the table's
    /// own become records.
    Nexmark {
        source: Arc<generator::nexmark::NexmarkSource>,
        per_chunk: u64,
        count: Option<u64>,
    },
    /// Events already parsed (benchmarks and tests of the engine without a parser): each event must
    /// carry its key, hash, `op`, values and `ts`; the runtime fills in the rest.
    Memory {
        events: Arc<[crate::record::event::Event]>,
        per_chunk: u64,
    },
    /// A Kafka partition; chunks are offset ranges of `records_per_chunk` when it is bounded
    /// (`stop_at = "end"`), else what has arrived, up to that many records.
    Kafka(kafka::KafkaPart),
}

/// Records one Kafka chunk covers at most, for a given `chunk_bytes`.
pub fn kafka_records_per_chunk(chunk_bytes: usize) -> u64 {
    (chunk_bytes as u64 / 128).max(1)
}

#[derive(Debug, Clone)]
pub struct Partition {
    pub source: usize,
    /// File path or `generator`; used in dead letters and metrics.
    pub name: String,
    pub max_out_of_orderness_ms: i64,
    pub kind: PartKind,
    /// Chunks of a file or the generator already read by the run a job resumes (a job that reads
    /// Kafka numbers its chunks afresh when it resumes; Kafka partitions resume at an offset).
    pub first_chunk: u64,
}

impl Partition {
    /// Chunks this partition is cut into (from `first_chunk` on); `None` = unbounded.
    pub fn chunks(&self, chunk_bytes: usize) -> Option<u64> {
        self.all_chunks(chunk_bytes)
            .map(|c| c.saturating_sub(self.first_chunk))
    }

    fn all_chunks(&self, chunk_bytes: usize) -> Option<u64> {
        match &self.kind {
            PartKind::File { size, .. } => Some(size.div_ceil(chunk_bytes as u64)),
            PartKind::Generator {
                per_chunk, count, ..
            }
            | PartKind::Nexmark {
                per_chunk, count, ..
            } => count.map(|c| c.div_ceil(*per_chunk)),
            PartKind::Memory { events, per_chunk } => {
                Some((events.len() as u64).div_ceil(*per_chunk))
            }
            PartKind::Kafka(k) => k.end.map(|end| {
                ((end - k.start).max(0) as u64).div_ceil(kafka_records_per_chunk(chunk_bytes))
            }),
        }
    }
}

/// Expands every source into its partitions (globs sorted by path), in plan order.
pub fn partitions(plan: &Plan) -> Result<Vec<Partition>, SourceError> {
    let mut out = Vec::new();
    for (i, src) in plan.sources.iter().enumerate() {
        let ooo = src.watermark.max_out_of_orderness_ms;
        match &src.kind {
            SourceKind::File { path } => {
                for p in file::expand(&src.name, path)? {
                    let size = std::fs::metadata(&p)
                        .map_err(|err| SourceError::Open {
                            source_name: src.name.clone(),
                            path: p.clone(),
                            err,
                        })?
                        .len();
                    out.push(Partition {
                        source: i,
                        name: p.display().to_string(),
                        max_out_of_orderness_ms: ooo,
                        kind: PartKind::File { path: p, size },
                        first_chunk: 0,
                    });
                }
            }
            SourceKind::Generator(g) => {
                out.push(generator_partition(i, ooo, g, plan.runtime.chunk_bytes))
            }
            SourceKind::Nexmark(n) => out.push(Partition {
                source: i,
                name: format!("nexmark/{}", n.table.name()),
                max_out_of_orderness_ms: ooo,
                kind: PartKind::Nexmark {
                    source: Arc::new(generator::nexmark::NexmarkSource::new(n)),
                    per_chunk: (plan.runtime.chunk_bytes / generator::nexmark::NEXMARK_EVENT_BYTES)
                        .max(1) as u64,
                    count: n.count,
                },
                first_chunk: 0,
            }),
            SourceKind::Kafka(k) => {
                for p in kafka::discover(&src.name, k)? {
                    out.push(Partition {
                        source: i,
                        name: format!("{}/{}", p.topic, p.partition),
                        max_out_of_orderness_ms: ooo,
                        kind: PartKind::Kafka(p),
                        first_chunk: 0,
                    });
                }
            }
        }
    }
    if out.len() > u16::MAX as usize {
        return Err(SourceError::TooManyPartitions {
            max: u16::MAX as usize,
            found: out.len(),
        });
    }
    Ok(out)
}

fn generator_partition(
    source: usize,
    ooo: i64,
    g: &GeneratorPlan,
    chunk_bytes: usize,
) -> Partition {
    Partition {
        source,
        name: "generator".into(),
        max_out_of_orderness_ms: ooo,
        kind: PartKind::Generator {
            model: Arc::new(ClickModel::new(g)),
            per_chunk: (chunk_bytes / GENERATED_EVENT_BYTES).max(1) as u64,
            count: g.count,
        },
        first_chunk: 0,
    }
}
