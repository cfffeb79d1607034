//! Sinks: where result lines, late events and dead letters are written.
//!
//! Every shard writes its own lines into its own buffer and appends whole buffers (whole lines only)
//! to the shared output with one `write` on a file opened with `O_APPEND`, so shards never share a
//! lock or a buffer and lines never interleave. A file is truncated when the run opens it.
//!
//! Delivery guarantee: without checkpoints these sinks write as results are produced and a crash
//! loses the unflushed buffer; results are exact for a run that ends normally (bounded input, or
//! SIGINT/SIGTERM). With checkpoints a file sink is staged and committed with each checkpoint
//! ([`staged`]): exactly-once. Stdout and the dead-letter file are at-least-once (flushed at each
//! checkpoint, replayed after it). File output is an upsert log (see README). Parquet sinks
//! ([`parquet`]) turn the lines into rows of part files, committed with checkpoints likewise.

pub mod kafka;
pub mod parquet;
pub mod postgres;
pub mod staged;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Buffered bytes per shard and sink before they are appended to the output.
pub const FLUSH_BYTES: usize = 256 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error("sink `{sink}`: cannot open `{path}`: {err}")]
    Open {
        sink: String,
        path: PathBuf,
        err: io::Error,
    },
    #[error("sink `{sink}`: write failed: {err}")]
    Write { sink: String, err: io::Error },
    #[error("sink `{sink}`: {message}")]
    Kafka { sink: String, message: String },
    #[error("sink `{sink}`: {err}")]
    Parquet {
        sink: String,
        err: parquet::ParquetSinkError,
    },
    #[error("sink `{sink}`: {message}")]
    Postgres { sink: String, message: String },
}

#[derive(Clone, Debug)]
pub enum Target {
    File(Arc<File>),
    /// A file written through per-shard staging, committed with checkpoints.
    Staged(PathBuf),
    Stdout,
    /// At-least-once Kafka: one producer per shard, taken by its writer.
    Kafka(Arc<std::sync::Mutex<Vec<Option<kafka::KafkaOut>>>>),
    /// Parquet part files in a directory, one writer per shard.
    Parquet(Arc<parquet::ParquetShared>),
    /// Upserts into a PostgreSQL table: one connection per shard, opened by its writer.
    Postgres(Arc<postgres::Shared>),
}

/// An output shared by all shards; clone one [`SinkWriter`] per shard from it.
#[derive(Clone, Debug)]
pub struct SharedSink {
    pub name: String,
    target: Target,
    /// An exactly-once Avro Kafka sink's encoder: staged lines are checked against its schema
    /// first, so a line it cannot hold is a dead letter now rather than a failed commit.
    check: Option<Arc<crate::avro::AvroEncoder>>,
}

impl SharedSink {
    /// Opens the file sink at `path`: truncated, or kept and appended to when `append` (a run that
    /// resumes from a checkpoint).
    pub fn file(name: &str, path: &Path, append: bool) -> Result<SharedSink, SinkError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|err| SinkError::Open {
                sink: name.into(),
                path: path.into(),
                err,
            })?;
        }
        let f = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(!append)
            .open(path)
            .and_then(|f| {
                drop(f);
                OpenOptions::new().append(true).open(path)
            })
            .map_err(|err| SinkError::Open {
                sink: name.into(),
                path: path.into(),
                err,
            })?;
        Ok(SharedSink {
            name: name.into(),
            target: Target::File(Arc::new(f)),
            check: None,
        })
    }

    /// The file sink at `path` under checkpoints (see [`staged`]): the output is truncated unless
    /// the run resumes; lines reach it only through commits.
    pub fn staged(name: &str, path: &Path, append: bool) -> Result<SharedSink, SinkError> {
        let opened = SharedSink::file(name, path, append)?;
        drop(opened);
        Ok(SharedSink {
            name: name.into(),
            target: Target::Staged(path.to_path_buf()),
            check: None,
        })
    }

    /// Staging only, at `path` (which is never written itself): the lines of an exactly-once
    /// Kafka sink, sent by its committer.
    pub fn staged_only(
        name: &str,
        path: &Path,
        avro: Option<Arc<crate::avro::AvroEncoder>>,
    ) -> SharedSink {
        SharedSink {
            name: name.into(),
            target: Target::Staged(path.to_path_buf()),
            check: avro,
        }
    }

    /// An at-least-once Kafka sink with a producer for each of `shards`.
    pub fn kafka(
        name: &str,
        plan: &crate::plan::KafkaSinkPlan,
        shards: usize,
        avro: Option<Arc<crate::avro::AvroEncoder>>,
    ) -> Result<SharedSink, SinkError> {
        let outs = (0..shards)
            .map(|_| kafka::KafkaOut::new(plan, avro.clone()).map(Some))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|message| SinkError::Kafka {
                sink: name.into(),
                message,
            })?;
        Ok(SharedSink {
            name: name.into(),
            target: Target::Kafka(Arc::new(std::sync::Mutex::new(outs))),
            check: None,
        })
    }

    /// A Parquet sink writing part files into `plan.path`, committed with checkpoints when
    /// `checkpointed` (see [`parquet`]).
    pub fn parquet(
        name: &str,
        plan: &parquet::ParquetSinkPlan,
        checkpointed: bool,
    ) -> Result<SharedSink, SinkError> {
        let shared = parquet::ParquetShared::open(name, plan, checkpointed).map_err(|err| {
            SinkError::Parquet {
                sink: name.into(),
                err,
            }
        })?;
        Ok(SharedSink {
            name: name.into(),
            target: Target::Parquet(Arc::new(shared)),
            check: None,
        })
    }

    /// A PostgreSQL sink, checked to be reachable now; refused rows go to `dead`.
    pub fn postgres(
        name: &str,
        plan: &crate::plan::PostgresSinkPlan,
        dead: Option<SharedSink>,
    ) -> Result<SharedSink, SinkError> {
        let shared =
            postgres::Shared::open(name, plan, dead).map_err(|message| SinkError::Postgres {
                sink: name.into(),
                message,
            })?;
        Ok(SharedSink {
            name: name.into(),
            target: Target::Postgres(shared),
            check: None,
        })
    }

    /// A table sink's counters, for `/metrics`.
    pub fn counters(&self) -> Option<Arc<postgres::SinkCounters>> {
        match &self.target {
            Target::Postgres(s) => Some(s.counters.clone()),
            _ => None,
        }
    }

    /// The output file of a staged sink.
    pub fn staged_path(&self) -> Option<&Path> {
        match &self.target {
            Target::Staged(p) => Some(p),
            _ => None,
        }
    }

    pub fn stdout(name: &str) -> SharedSink {
        SharedSink {
            name: name.into(),
            target: Target::Stdout,
            check: None,
        }
    }

    /// Shard `shard`'s writer; a staged sink's first lines belong to checkpoint `first_id`.
    pub fn writer(&self, shard: usize, first_id: u64) -> SinkWriter {
        SinkWriter {
            sink: self.clone(),
            buf: Vec::with_capacity(FLUSH_BYTES + 4096),
            lines: 0,
            rejected: Vec::new(),
            stage: match &self.target {
                Target::Staged(p) => Some(staged::Stage::new(p.clone(), shard, first_id)),
                _ => None,
            },
            kafka: match &self.target {
                Target::Kafka(outs) => outs
                    .lock()
                    .ok()
                    .and_then(|mut v| v.get_mut(shard).and_then(Option::take)),
                _ => None,
            },
            parquet: match &self.target {
                Target::Parquet(p) => Some(parquet::ParquetOut::new(p.clone(), shard, first_id)),
                _ => None,
            },
            pg: match &self.target {
                Target::Postgres(s) => Some(postgres::PgOut::new(s, shard)),
                _ => None,
            },
        }
    }
}

/// One shard's buffer for one sink.
#[derive(Debug)]
pub struct SinkWriter {
    sink: SharedSink,
    buf: Vec<u8>,
    pub lines: u64,
    stage: Option<staged::Stage>,
    /// Staged lines the sink's Avro schema refused (see `SharedSink::check`).
    rejected: kafka::Rejected,
    kafka: Option<kafka::KafkaOut>,
    parquet: Option<parquet::ParquetOut>,
    /// A PostgreSQL sink's connection, or why it could not start.
    pg: Option<Result<postgres::PgOut, String>>,
}

impl SinkWriter {
    /// The sink's name in the config.
    pub fn name(&self) -> &str {
        &self.sink.name
    }

    /// Appends one complete line (ending in `\n`).
    #[inline]
    pub fn line(&mut self, line: &[u8]) -> Result<(), SinkError> {
        self.buf.extend_from_slice(line);
        self.lines += 1;
        if self.buf.len() >= FLUSH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Appends `n` complete lines at once.
    pub fn lines(&mut self, lines: &[u8], n: u64) -> Result<(), SinkError> {
        self.buf.extend_from_slice(lines);
        self.lines += n;
        if self.buf.len() >= FLUSH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> Result<(), SinkError> {
        self.flush_to(false)
    }

    /// Flushes and, for Kafka, waits until the broker has every record: at a checkpoint barrier
    /// and at the end of the run.
    pub fn flush_durable(&mut self) -> Result<(), SinkError> {
        self.flush_to(true)
    }

    /// Hands a table sink's lines over once they have waited its `max_delay`, and reports a
    /// connection's failure without waiting for the next write: called every shard loop turn.
    #[inline]
    pub fn tick(&mut self, now: std::time::Instant) -> Result<(), SinkError> {
        let Some(pg) = &self.pg else {
            return Ok(());
        };
        let failed = match pg {
            Ok(p) if !self.buf.is_empty() && p.due(now) => return self.flush(),
            Ok(p) => p.failed(),
            Err(m) => Some(m.clone()),
        };
        match failed {
            Some(message) => Err(SinkError::Postgres {
                sink: self.sink.name.clone(),
                message,
            }),
            None => Ok(()),
        }
    }

    fn flush_to(&mut self, durable: bool) -> Result<(), SinkError> {
        if let Some(pg) = self.pg.as_mut() {
            let res = match pg {
                Ok(p) => p.write(&mut self.buf, durable),
                Err(m) => Err(m.clone()),
            };
            return res.map_err(|message| SinkError::Postgres {
                sink: self.sink.name.clone(),
                message,
            });
        }
        if let Some(k) = self.kafka.as_mut() {
            let res = k.write(&self.buf, durable);
            self.buf.clear();
            return res.map_err(|message| SinkError::Kafka {
                sink: self.sink.name.clone(),
                message,
            });
        }
        if let Some(p) = self.parquet.as_mut() {
            let res = p.write(&self.buf);
            self.buf.clear();
            return res.map_err(|err| SinkError::Parquet {
                sink: self.sink.name.clone(),
                err,
            });
        }
        if self.buf.is_empty() {
            return Ok(());
        }
        let res = match &self.sink.target {
            Target::File(f) => (&**f).write_all(&self.buf),
            Target::Staged(_) => match self.stage.as_mut() {
                Some(st) => match &self.sink.check {
                    Some(enc) => {
                        checked(enc, &mut self.buf, &mut self.rejected);
                        st.write(&self.buf)
                    }
                    None => st.write(&self.buf),
                },
                None => Ok(()),
            },
            Target::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(&self.buf).and_then(|_| out.flush())
            }
            // The writer's producer was taken at creation; a second writer for one shard has none.
            Target::Kafka(_) => Err(io::Error::other("no Kafka producer for this shard")),
            // Written above: a Parquet writer is made with every writer of its sink.
            Target::Parquet(_) => Ok(()),
            Target::Postgres(_) => Ok(()),
        };
        self.buf.clear();
        res.map_err(|err| SinkError::Write {
            sink: self.sink.name.clone(),
            err,
        })
    }

    /// At checkpoint `id`'s barrier: everything written so far is flushed; a staged sink hands
    /// back the staging file of `id` (a Parquet sink its part files of `id`), to be fsynced before
    /// `id`'s manifest is written.
    pub fn seal(&mut self, id: u64) -> Result<Vec<std::fs::File>, SinkError> {
        self.flush_durable()?;
        if let Some(p) = self.parquet.as_mut() {
            return p.seal(id).map_err(|err| SinkError::Parquet {
                sink: self.sink.name.clone(),
                err,
            });
        }
        Ok(self
            .stage
            .as_mut()
            .and_then(|st| st.seal(id))
            .into_iter()
            .collect())
    }

    /// The end of the run: flushed as at a barrier, and a Parquet sink's open file finished.
    pub fn finish(&mut self) -> Result<(), SinkError> {
        self.flush_durable()?;
        match self.parquet.as_mut() {
            Some(p) => p.finish().map_err(|err| SinkError::Parquet {
                sink: self.sink.name.clone(),
                err,
            }),
            None => Ok(()),
        }
    }

    /// Whether some lines were refused by the output (a Parquet value that does not fit its
    /// column), waiting for [`SinkWriter::take_rejected`].
    pub fn has_rejected(&self) -> bool {
        !self.rejected.is_empty()
            || self
                .parquet
                .as_ref()
                .is_some_and(|p| !p.rejected.is_empty())
            || self.kafka.as_ref().is_some_and(|k| !k.rejected.is_empty())
    }

    /// The refused lines, with why: for the dead letters.
    pub fn take_rejected(&mut self) -> Vec<(String, Vec<u8>)> {
        let mut out = std::mem::take(&mut self.rejected);
        if let Some(p) = self.parquet.as_mut() {
            out.append(&mut p.rejected);
        }
        if let Some(k) = self.kafka.as_mut() {
            out.append(&mut k.rejected);
        }
        out
    }
}

/// Keeps in `buf` only the lines `enc` can encode; the others go to `rejected` with why.
fn checked(enc: &crate::avro::AvroEncoder, buf: &mut Vec<u8>, rejected: &mut kafka::Rejected) {
    let mut scratch = Vec::new();
    let mut kept = Vec::with_capacity(buf.len());
    for line in buf.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        match enc.encode(body, &mut scratch) {
            Ok(()) => kept.extend_from_slice(line),
            Err(why) => rejected.push((why, body.to_vec())),
        }
    }
    *buf = kept;
}
