//! One shard's Parquet output: result lines become rows of the open part file (an Arrow writer
//! over a temporary file, row groups of at most [`ROW_GROUP_ROWS`] rows); at `roll.rows` rows the
//! file is finished (footer written) and the next one starts. Under checkpoints a finished file
//! stays under its temporary name until the checkpoint it belongs to commits it (see [`files`]);
//! the open one is finished at the checkpoint barrier. Without checkpoints a finished file is
//! fsynced and renamed at once. Rows whose values do not fit their columns are kept aside for
//! the dead letters.

use super::files::{self, Part};
use super::rows::{Batch, Layout};
use super::{ParquetSinkError, ParquetSinkPlan};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Rows per row group at most (fewer when `roll.rows` is smaller).
pub const ROW_GROUP_ROWS: u64 = 128 * 1024;

/// A Parquet sink as all shards share it: where it writes and the columns of its files (fixed by
/// the first shard that has rows, or by the files a resumed run finds, so every file agrees).
#[derive(Debug)]
pub struct ParquetShared {
    pub name: String,
    pub dir: PathBuf,
    pub roll_rows: u64,
    pub pinned: Vec<(String, super::ColumnType)>,
    /// Files are committed by checkpoints (else published as they are finished).
    pub checkpointed: bool,
    layout: Mutex<Option<Arc<Layout>>>,
}

impl ParquetShared {
    /// Opens the sink's directory. A run without checkpoints starts it over (deletes the files this
    /// sink wrote before, as a file sink truncates its file); under checkpoints the recovery has
    /// already made it what the restored checkpoint covers. A resumed run keeps the columns of
    /// the files already there.
    pub fn open(
        name: &str,
        plan: &ParquetSinkPlan,
        checkpointed: bool,
    ) -> Result<ParquetShared, ParquetSinkError> {
        let io = |err| ParquetSinkError::Io {
            path: plan.path.clone(),
            err,
        };
        std::fs::create_dir_all(&plan.path).map_err(io)?;
        if !checkpointed {
            files::recover(&plan.path, None).map_err(io)?;
        }
        let mut layout = None;
        for (p, path) in files::list(&plan.path).map_err(io)? {
            if p.temp {
                continue;
            }
            let f = File::open(&path).map_err(|err| ParquetSinkError::Io {
                path: path.clone(),
                err,
            })?;
            let meta =
                parquet::arrow::arrow_reader::ArrowReaderMetadata::load(&f, Default::default())
                    .map_err(|e| ParquetSinkError::Read {
                        path: path.clone(),
                        message: e.to_string(),
                    })?;
            layout = Layout::from_schema(meta.schema()).map(Arc::new);
            break;
        }
        Ok(ParquetShared {
            name: name.into(),
            dir: plan.path.clone(),
            roll_rows: plan.roll_rows.max(1),
            pinned: plan.columns.clone(),
            checkpointed,
            layout: Mutex::new(layout),
        })
    }

    /// The files' columns: fixed already, or inferred from `lines` now (`None` while no line
    /// has given a column).
    fn layout(&self, lines: &[u8]) -> Option<Arc<Layout>> {
        let mut g = match self.layout.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if g.is_none() {
            *g = Layout::infer(lines, &self.pinned).map(Arc::new);
        }
        g.clone()
    }
}

struct Open {
    writer: ArrowWriter<File>,
    part: Part,
    rows: u64,
}

/// One shard's writer for one Parquet sink.
pub struct ParquetOut {
    shared: Arc<ParquetShared>,
    shard: usize,
    /// The checkpoint the rows written now are committed with.
    id: u64,
    /// The next file's number within (`id`, shard).
    seq: u64,
    open: Option<Open>,
    batch: Option<Batch>,
    /// Finished temporaries of this checkpoint, to be fsynced before its manifest.
    finished: Vec<File>,
    /// (reason, line) of rows that do not fit the files' columns.
    pub rejected: Vec<(String, Vec<u8>)>,
    /// Rows written to files so far.
    pub rows: u64,
}

impl std::fmt::Debug for ParquetOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetOut")
            .field("sink", &self.shared.name)
            .field("shard", &self.shard)
            .field("id", &self.id)
            .field("seq", &self.seq)
            .finish()
    }
}

impl ParquetOut {
    pub fn new(shared: Arc<ParquetShared>, shard: usize, first_id: u64) -> ParquetOut {
        ParquetOut {
            shared,
            shard,
            id: first_id,
            seq: 0,
            open: None,
            batch: None,
            finished: Vec::new(),
            rejected: Vec::new(),
            rows: 0,
        }
    }

    fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// Appends whole result lines (each ending in `\n`) as rows.
    pub fn write(&mut self, lines: &[u8]) -> Result<(), ParquetSinkError> {
        if lines.is_empty() {
            return Ok(());
        }
        if self.batch.is_none() {
            self.batch = self.shared.layout(lines).map(Batch::new);
        }
        for line in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let pushed = match self.batch.as_mut() {
                Some(batch) => batch.push(line),
                None => super::rows::fields(line).and(Err("a row with no fields, and no column \
                     is known yet (pin one in `columns`)"
                    .to_string())),
            };
            match pushed {
                Ok(()) => {
                    let in_file = self.open.as_ref().map_or(0, |o| o.rows);
                    let pending = self.batch.as_ref().map_or(0, |b| b.rows as u64);
                    if in_file + pending >= self.shared.roll_rows {
                        self.write_batch()?;
                        self.finish_file()?;
                    }
                }
                Err(why) => self.rejected.push((
                    format!("parquet sink `{}`: {why}", self.shared.name),
                    line.to_vec(),
                )),
            }
        }
        self.write_batch()
    }

    /// The rows gathered so far go to the open file (opened now if none is).
    fn write_batch(&mut self) -> Result<(), ParquetSinkError> {
        let Some(batch) = self.batch.as_mut() else {
            return Ok(());
        };
        if batch.rows == 0 {
            return Ok(());
        }
        let rb = batch.take().map_err(|e| ParquetSinkError::Encode {
            message: e.to_string(),
        })?;
        if self.open.is_none() {
            let part = Part {
                id: self.id,
                shard: self.shard,
                seq: self.seq,
                temp: true,
            };
            let dir = self.shared.dir.clone();
            let f = files::create(&dir, &part).map_err(|err| ParquetSinkError::Io {
                path: dir.join(part.temp_name()),
                err,
            })?;
            let group = ROW_GROUP_ROWS.min(self.shared.roll_rows) as usize;
            let props = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_max_row_group_row_count(Some(group.max(1)))
                .set_created_by(format!("sluice {}", env!("CARGO_PKG_VERSION")))
                .build();
            let writer = ArrowWriter::try_new(f, rb.schema(), Some(props)).map_err(encode)?;
            self.seq += 1;
            self.open = Some(Open {
                writer,
                part,
                rows: 0,
            });
        }
        if let Some(o) = self.open.as_mut() {
            o.writer.write(&rb).map_err(encode)?;
            o.rows += rb.num_rows() as u64;
            self.rows += rb.num_rows() as u64;
        }
        Ok(())
    }

    /// Finishes the open file (footer): kept for the checkpoint's commit, or published at once
    /// without checkpoints.
    fn finish_file(&mut self) -> Result<(), ParquetSinkError> {
        let Some(o) = self.open.take() else {
            return Ok(());
        };
        let f = o.writer.into_inner().map_err(encode)?;
        if self.shared.checkpointed {
            self.finished.push(f);
            return Ok(());
        }
        let dir = self.dir().to_path_buf();
        let io = |err| ParquetSinkError::Io {
            path: dir.join(o.part.temp_name()),
            err,
        };
        f.sync_all().map_err(io)?;
        files::publish(&dir, &o.part).map_err(io)?;
        files::sync_dir(&dir).map_err(io)
    }

    /// At checkpoint `id`'s barrier: the open file is finished; hands back every file finished for
    /// `id`, to be fsynced before its manifest is written. Later rows belong to `id + 1`.
    pub fn seal(&mut self, id: u64) -> Result<Vec<File>, ParquetSinkError> {
        self.write_batch()?;
        self.finish_file()?;
        self.id = id + 1;
        self.seq = 0;
        Ok(std::mem::take(&mut self.finished))
    }

    /// End of the run: the open file is finished (and, without checkpoints, published).
    pub fn finish(&mut self) -> Result<(), ParquetSinkError> {
        self.write_batch()?;
        self.finish_file()
    }
}

fn encode(e: parquet::errors::ParquetError) -> ParquetSinkError {
    ParquetSinkError::Encode {
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Decimal128Array, Int64Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    fn plan(dir: &Path, roll_rows: u64) -> ParquetSinkPlan {
        ParquetSinkPlan {
            path: dir.to_path_buf(),
            roll_rows,
            columns: vec![(
                "window_start".into(),
                crate::record::columns::ColumnType::Timestamp,
            )],
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    /// (n, spend) of every row of a part file.
    fn read(path: &Path) -> Vec<(i64, i128)> {
        let f = File::open(path).unwrap();
        let r = ParquetRecordBatchReaderBuilder::try_new(f)
            .unwrap()
            .build()
            .unwrap();
        let mut out = Vec::new();
        for b in r {
            let b = b.unwrap();
            let n = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            let s = b
                .column(2)
                .as_any()
                .downcast_ref::<Decimal128Array>()
                .unwrap();
            for i in 0..b.num_rows() {
                out.push((n.value(i), s.value(i)));
            }
        }
        out
    }

    fn lines(from: i64, to: i64) -> Vec<u8> {
        let mut v = Vec::new();
        for n in from..to {
            v.extend(
                format!("{{\"n\":{n},\"window_start\":1700000000000,\"spend\":{n}.25}}\n")
                    .as_bytes(),
            );
        }
        v
    }

    #[test]
    fn rolled_files_stay_temporary_until_their_checkpoint_commits_them() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("out");
        let shared = Arc::new(ParquetShared::open("hist", &plan(&dir, 3), true).unwrap());
        let mut w = ParquetOut::new(shared.clone(), 1, 5);
        w.write(&lines(0, 5)).unwrap();
        w.write(b"{\"n\":\"bad\",\"window_start\":1,\"spend\":1.00}\n{\"n\":9,\"spend\":1.005}\n")
            .unwrap();
        w.write(&lines(5, 7)).unwrap();
        assert_eq!(w.rejected.len(), 2);
        assert!(
            w.rejected[0]
                .0
                .starts_with("parquet sink `hist`: column `n`")
                && w.rejected[1].0.contains("column `spend`"),
            "{:?}",
            w.rejected
        );
        // Two files rolled at 3 rows, one open; nothing visible yet.
        assert!(
            names(&dir).iter().all(|n| n.ends_with(".tmp")),
            "{:?}",
            names(&dir)
        );
        let sealed = w.seal(5).unwrap();
        assert_eq!(sealed.len(), 3);
        w.write(&lines(7, 8)).unwrap(); // belongs to checkpoint 6
        let _ = w.seal(6).unwrap();
        assert_eq!(files::commit(&dir, 5).unwrap(), 3);
        assert_eq!(
            names(&dir),
            [
                ".part-6-1-0.parquet.tmp",
                "part-5-1-1.parquet",
                "part-5-1-2.parquet",
                "part-5-1.parquet"
            ]
        );
        assert_eq!(
            read(&dir.join("part-5-1.parquet")),
            [(0, 25), (1, 125), (2, 225)]
        );
        assert_eq!(read(&dir.join("part-5-1-2.parquet")), [(6, 625)]);
        // A resumed run keeps the columns of the files there (the timestamp pin included).
        let again = ParquetShared::open("hist", &plan(&dir, 3), true).unwrap();
        let l = again.layout(b"").unwrap();
        assert_eq!(l.names, ["n", "window_start", "spend"]);
        assert_eq!(l.types, shared.layout(b"").unwrap().types);
    }

    #[test]
    fn without_checkpoints_files_are_published_as_they_finish_and_old_ones_go() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("out");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("part-0-3.parquet"), b"from an earlier run").unwrap();
        let shared = Arc::new(ParquetShared::open("hist", &plan(&dir, 4), false).unwrap());
        let mut w = ParquetOut::new(shared, 0, 0);
        w.write(&lines(0, 5)).unwrap();
        assert_eq!(names(&dir), [".part-0-0-1.parquet.tmp", "part-0-0.parquet"]);
        w.finish().unwrap();
        assert_eq!(names(&dir), ["part-0-0-1.parquet", "part-0-0.parquet"]);
        assert_eq!(read(&dir.join("part-0-0-1.parquet")), [(4, 425)]);
        assert_eq!(w.rows, 5);
    }
}
