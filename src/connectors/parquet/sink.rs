//! The Parquet sink as the plan and the runtime see it: its table validated, opened for a run
//! (one writer per shard), and its share of each checkpoint's commit (part files renamed into
//! place once the checkpoint that covers them is durable; see [`super::files`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::config::ParquetSinkConfig;
use super::{files, ColumnType, ParquetOut, ParquetShared};
use crate::checkpoint::Manifest;
use crate::connectors::check::Check;
use crate::connectors::sink::{
    known_types, Committer, Guarantee, OpenCx, OpenSink, OutputPath, Sink, SinkError, SinkPart,
};
use crate::connectors::SinkTable;

/// `[sinks.NAME] type = "parquet"`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ParquetSinkPlan {
    /// The directory of the part files.
    pub path: PathBuf,
    /// A file is finished after this many rows (and at every checkpoint).
    pub roll_rows: u64,
    /// Pinned column types, by column name.
    pub columns: Vec<(String, ColumnType)>,
}

impl SinkTable for ParquetSinkConfig {
    fn inputs(&self) -> &[String] {
        &self.inputs
    }

    fn epoch_time_columns(&self) -> bool {
        true
    }

    fn flink_notes(&self) -> Vec<&'static str> {
        [
            &super::sql::FLINK_NOTES[..],
            &crate::connectors::file::sql::FLINK_SINK_NOTES[..],
        ]
        .concat()
    }

    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Sink> {
        let p = self;
        if p.path.as_os_str().is_empty() {
            cx.err(
                cx.key("path"),
                "the path cannot be empty (a directory for the part files, e.g. \"out/history/\")"
                    .into(),
            );
        }
        if p.roll.rows == 0 {
            cx.err(
                cx.key("roll").key("rows"),
                "must be at least 1 (rows per part file, e.g. 1000000)".into(),
            );
        }
        let mut columns = Vec::new();
        for (col, ty) in &p.columns {
            match ColumnType::parse(ty) {
                Ok(t) => columns.push((col.clone(), t)),
                Err(why) => cx.err(cx.key("columns").key(col), why),
            }
        }
        Arc::new(ParquetSinkPlan {
            path: p.path.clone(),
            roll_rows: p.roll.rows,
            columns,
        })
    }
}

impl Sink for ParquetSinkPlan {
    fn kind(&self) -> &'static str {
        "parquet"
    }

    fn describe(&self) -> String {
        format!("parquet {}", self.path.display())
    }

    fn outputs(&self) -> Vec<OutputPath<'_>> {
        vec![OutputPath {
            path: &self.path,
            key: "path",
            noun: "a path",
        }]
    }

    fn guarantee(&self, checkpointed: bool) -> Guarantee {
        if checkpointed {
            Guarantee::ExactlyOnce
        } else {
            Guarantee::AtLeastOnce
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn committer(&self, name: &str, _checkpoint_dir: &Path) -> Option<Arc<dyn Committer>> {
        Some(Arc::new(PartCommitter {
            dir: self.path.clone(),
            name: name.to_string(),
        }))
    }

    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSink>, SinkError> {
        // A Parquet decimal has one scale per column: sums keep the scale their first rows show
        // (their inputs' scale), averages, whose digits vary row to row, are floats unless pinned.
        let mut p = self.clone();
        p.columns = known_types(&p.columns, cx.known, None, ColumnType::Double);
        let checkpointed = cx.checkpoint_dir.is_some();
        let shared = ParquetShared::open(cx.name, &p, checkpointed)
            .map_err(|e| SinkError::new(cx.name, e.to_string()))?;
        Ok(Arc::new(OpenParquet {
            shared: Arc::new(shared),
            committer: checkpointed.then(|| PartCommitter {
                dir: self.path.clone(),
                name: cx.name.to_string(),
            }),
        }))
    }
}

#[derive(Debug)]
struct OpenParquet {
    shared: Arc<ParquetShared>,
    committer: Option<PartCommitter>,
}

impl OpenSink for OpenParquet {
    fn part(&self, shard: usize, first_id: u64) -> Result<Box<dyn SinkPart>, SinkError> {
        Ok(Box::new(ParquetOut::new(
            self.shared.clone(),
            shard,
            first_id,
        )))
    }

    fn committer(&self) -> Option<Arc<dyn Committer>> {
        self.committer.clone().map(|c| Arc::new(c) as _)
    }
}

impl SinkPart for ParquetOut {
    fn write(&mut self, buf: &mut Vec<u8>, _durable: bool) -> Result<(), String> {
        let res = ParquetOut::write(self, buf);
        buf.clear();
        res.map_err(|e| e.to_string())
    }

    fn seal(&mut self, id: u64) -> Result<Vec<std::fs::File>, String> {
        ParquetOut::seal(self, id).map_err(|e| e.to_string())
    }

    fn finish(&mut self) -> Result<(), String> {
        ParquetOut::finish(self).map_err(|e| e.to_string())
    }

    fn has_rejected(&self) -> bool {
        !self.rejected.is_empty()
    }

    fn take_rejected(&mut self) -> Vec<(String, Vec<u8>)> {
        std::mem::take(&mut self.rejected)
    }
}

/// Renames each checkpoint's part files into place once it is durable. The manifest names the
/// checkpoint whose parts it covers, which differs from its own id once a savepoint is adopted
/// under a new one.
#[derive(Debug, Clone)]
struct PartCommitter {
    dir: PathBuf,
    name: String,
}

impl PartCommitter {
    fn key(&self) -> String {
        self.dir.to_string_lossy().into_owned()
    }
}

impl Committer for PartCommitter {
    fn name(&self) -> &str {
        &self.name
    }

    /// Part files the restored checkpoint covers are committed (a crash may have come before
    /// their rename), later ones deleted.
    fn recover(&self, newest: Option<&Manifest>) -> Result<(), String> {
        let key = self.key();
        let covered = newest.map(|m| m.sources["parquet"][key.as_str()].as_u64().unwrap_or(m.id));
        let r = files::recover(&self.dir, covered)
            .map_err(|e| format!("recovering Parquet files in {}: {e}", self.dir.display()))?;
        if r.committed + r.deleted > 0 {
            tracing::info!(
                dir = %self.dir.display(),
                committed = r.committed,
                deleted = r.deleted,
                "Parquet part files recovered: {} committed, {} after the checkpoint deleted",
                r.committed,
                r.deleted
            );
        }
        Ok(())
    }

    /// The temporaries' names must survive a power loss as well as their bytes: the manifest is
    /// about to say they exist. The manifest records the checkpoint whose parts it covers.
    fn prepare(
        &self,
        id: u64,
    ) -> Result<Option<(&'static str, String, serde_json::Value)>, String> {
        files::sync_dir(&self.dir)
            .map_err(|e| format!("syncing Parquet directory {}: {e}", self.dir.display()))?;
        Ok(Some(("parquet", self.key(), serde_json::json!(id))))
    }

    fn commit(&self, id: u64, _recorded: Option<&serde_json::Value>) -> Result<(), String> {
        files::commit(&self.dir, id)
            .map(|_| ())
            .map_err(|e| format!("committing Parquet files in {}: {e}", self.dir.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::Kind;

    #[test]
    fn parquet_recovery_keeps_the_parts_the_state_covers_even_under_an_adopted_id() {
        use crate::connectors::parquet::files::Part;
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("hist");
        std::fs::create_dir_all(&dir).unwrap();
        let put = |id, temp| {
            let p = Part {
                id,
                shard: 0,
                seq: 0,
                temp,
            };
            let name = if temp { p.temp_name() } else { p.final_name() };
            std::fs::write(dir.join(name), b"x").unwrap();
        };
        put(3, false);
        put(4, true); // its manifest was durable, the rename had not happened
        put(6, false); // a later checkpoint of the lineage the savepoint was taken from
        put(7, true);
        // A savepoint taken at checkpoint 4, adopted as checkpoint 9 of this directory.
        let m = Manifest {
            format: 2,
            kind: Kind::Savepoint,
            id: 9,
            created_unix_ms: 0,
            key_groups: 8,
            sources: serde_json::json!({ "parquet": { dir.to_string_lossy(): 4 } }),
            operators: Default::default(),
            files: vec![],
        };
        let c = PartCommitter {
            dir: dir.clone(),
            name: "hist".into(),
        };
        c.recover(Some(&m)).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["part-3-0.parquet", "part-4-0.parquet"]);
        // No checkpoint: a fresh start drops them all.
        c.recover(None).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    }
}
