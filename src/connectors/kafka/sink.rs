//! Kafka sinks, and the guarantee each gives:
//! - `at_least_once`: each shard has its own producer and sends result lines as its buffer flushes
//!   (and at every checkpoint barrier). A replay after a crash sends the lines since the last
//!   checkpoint again; records are keyed (`key` fields), so a consumer that upserts by key ends
//!   with the same state.
//! - `exactly_once` (needs `[checkpoint]`): a write-ahead two-phase commit. Shards stage their lines
//!   per checkpoint like the file sink (`connectors::staged`, under the checkpoint directory); once a
//!   checkpoint's manifest is durable, the checkpoint writer sends its staged lines (and those of
//!   any earlier failed checkpoint) in ONE Kafka transaction together with a marker: the
//!   checkpoint id as the committed offset of group `<prefix>.checkpoints` on the output topic's
//!   partition 0, committed atomically with the records. Recovery reads the marker: a checkpoint
//!   whose transaction did not commit is committed again from its staging (roll forward), one that
//!   did is not; so a `read_committed` consumer sees every result exactly once. Results become
//!   visible once per checkpoint; the transaction is open only while the writer sends them, so
//!   `transaction.timeout.ms` need only exceed one commit, not the checkpoint interval.
//!
//! `format = "avro"` writes each line as Confluent wire-format Avro with the schema registered at
//! start (`produce::open_avro`); a line the schema cannot hold goes to the dead letters with the reason
//! (for `exactly_once`, the shards check each line before staging it, so a commit never meets one).
//!
//! Never on the event path: lines arrive in flushed buffers, never one per event.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::avro::{AvroEncoder, AvroSinkPlan};
use super::avro_plan::AvroCheck;
use super::commit::KafkaCommitter;
use super::config::{Delivery, KafkaSinkConfig};
use super::options::kafka_options;
use super::produce::{open_avro, preflight, KafkaOut, NoProducer};
use crate::connectors::check::Check;
use crate::connectors::sink::{
    ChangelogOption, Committer, Guarantee, OpenCx, OpenSink, Sink, SinkError, SinkPart,
};
use crate::connectors::staged::{LineCheck, Stage, StagePart};
use crate::connectors::SinkTable;
use crate::record::changelog::ChangelogEncoding;

/// `[sinks.NAME] type = "kafka"`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct KafkaSinkPlan {
    pub brokers: String,
    pub topic: String,
    pub key: Vec<String>,
    /// (header name, field path) of each record header taken from the result.
    pub headers: Vec<(String, String)>,
    pub exactly_once: bool,
    pub transactional_id_prefix: String,
    pub options: std::collections::BTreeMap<String, String>,
    /// `format = "avro"`: the registry, subject and schema the records are written with.
    pub avro: Option<AvroSinkPlan>,
    /// How it writes a changelog: with `key`, by key (upsert-kafka: a `-U` or `-D` is a
    /// tombstone); `changelog = "debezium-json"`, Flink's envelope; else appends.
    pub changelog: ChangelogEncoding,
}

impl SinkTable for KafkaSinkConfig {
    fn inputs(&self) -> &[String] {
        &self.inputs
    }

    fn flink_notes(&self) -> Vec<&'static str> {
        super::sql::flink_sink_notes(self)
    }

    fn changelog(&self) -> ChangelogOption {
        match self.changelog {
            ChangelogOption::Append if !self.key.is_empty() => ChangelogOption::Upsert,
            other => other,
        }
    }

    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Sink> {
        let k = self;
        if k.brokers.trim().is_empty() {
            cx.err(
                cx.key("brokers"),
                "the broker list cannot be empty (e.g. \"127.0.0.1:9092\")".into(),
            );
        }
        if k.topic.trim().is_empty() {
            cx.err(cx.key("topic"), "the topic name cannot be empty".into());
        }
        for (h, f) in &k.headers {
            if h.is_empty() || f.trim().is_empty() {
                cx.err(
                    cx.key("headers"),
                    format!("header `{h}` = `{f}`: a header needs a name and a result field"),
                );
            }
        }
        let exactly_once = k.delivery == Delivery::ExactlyOnce;
        if exactly_once && !cx.checkpointed {
            cx.err(cx.key("delivery"), "exactly_once commits a Kafka transaction with each checkpoint: add a [checkpoint] section, or use \"at_least_once\"".into());
        }
        let options = kafka_options(cx, &k.options, &k.options_env, &k.options_file);
        let avro = cx.avro_sink(k);
        let allowed: &[ChangelogOption] = if avro.is_some() {
            &[ChangelogOption::Append]
        } else {
            &[ChangelogOption::Append, ChangelogOption::DebeziumJson]
        };
        let changelog = match k.changelog.check(cx, "kafka", allowed) {
            ChangelogEncoding::Append if !k.key.is_empty() => ChangelogEncoding::ByKey,
            other => other,
        };
        Arc::new(KafkaSinkPlan {
            brokers: k.brokers.clone(),
            topic: k.topic.clone(),
            key: k.key.clone(),
            headers: k
                .headers
                .iter()
                .map(|(n, f)| (n.clone(), f.clone()))
                .collect(),
            exactly_once,
            transactional_id_prefix: k
                .transactional_id_prefix
                .clone()
                .unwrap_or_else(|| format!("sluice-{}", cx.name)),
            options,
            avro,
            changelog,
        })
    }
}

/// Where the shards stage an exactly-once sink's lines: inside the checkpoint directory.
fn stage_path(checkpoint_dir: &Path, sink: &str) -> PathBuf {
    checkpoint_dir.join("kafka-staging").join(sink)
}

impl Sink for KafkaSinkPlan {
    fn kind(&self) -> &'static str {
        "kafka"
    }

    fn describe(&self) -> String {
        let mode = if self.exactly_once {
            "exactly-once"
        } else {
            "at-least-once"
        };
        format!("kafka {} at {} ({mode})", self.topic, self.brokers)
    }

    fn changelog(&self) -> ChangelogEncoding {
        self.changelog
    }

    fn guarantee(&self, checkpointed: bool) -> Guarantee {
        match (self.exactly_once, checkpointed) {
            (true, _) => Guarantee::ExactlyOnce,
            (false, true) => Guarantee::AtLeastOnce,
            (false, false) => Guarantee::BestEffort,
        }
    }

    fn committer(&self, name: &str, checkpoint_dir: &Path) -> Option<Arc<dyn Committer>> {
        self.exactly_once.then(|| {
            Arc::new(KafkaCommitter::new(
                name,
                self,
                stage_path(checkpoint_dir, name),
            )) as _
        })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSink>, SinkError> {
        let fail = |m: String| SinkError::new(cx.name, m);
        preflight(self).map_err(fail)?;
        let avro = open_avro(self).map_err(fail)?;
        if self.exactly_once {
            let Some(dir) = cx.checkpoint_dir else {
                return Err(fail("exactly_once needs [checkpoint]".into()));
            };
            let stage = stage_path(dir, cx.name);
            let committer = KafkaCommitter::new(cx.name, self, stage.clone());
            // The committer sends the lines under the schema id they are checked with.
            if let Some(enc) = &avro {
                committer.use_avro(enc.clone());
            }
            return Ok(Arc::new(Staged {
                stage,
                avro,
                committer: Arc::new(committer),
            }));
        }
        let outs = (0..cx.shards)
            .map(|_| KafkaOut::new(self, avro.clone()).map(Some))
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        Ok(Arc::new(Producers {
            outs: Mutex::new(outs),
        }))
    }
}

/// At least once: one producer per shard, made at open so a failure stops the run at once, and
/// taken by its shard's part.
struct Producers {
    outs: Mutex<Vec<Option<KafkaOut>>>,
}

impl std::fmt::Debug for Producers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Producers")
    }
}

impl OpenSink for Producers {
    fn part(&self, shard: usize, _first_id: u64) -> Result<Box<dyn SinkPart>, SinkError> {
        let out = self
            .outs
            .lock()
            .ok()
            .and_then(|mut v| v.get_mut(shard).and_then(Option::take));
        Ok(match out {
            Some(o) => Box::new(o),
            None => Box::new(NoProducer),
        })
    }
}

/// Exactly once: lines staged per checkpoint, sent by the committer in one transaction each.
struct Staged {
    stage: PathBuf,
    /// Staged lines are checked against the schema first, so a line it cannot hold is a dead
    /// letter now rather than a failed commit.
    avro: Option<Arc<AvroEncoder>>,
    committer: Arc<KafkaCommitter>,
}

impl std::fmt::Debug for Staged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Staged({})", self.stage.display())
    }
}

impl OpenSink for Staged {
    fn part(&self, shard: usize, first_id: u64) -> Result<Box<dyn SinkPart>, SinkError> {
        let check = self.avro.clone().map(|a| a as Arc<dyn LineCheck>);
        Ok(Box::new(StagePart::new(
            Stage::new(self.stage.clone(), shard, first_id),
            check,
        )))
    }

    fn committer(&self) -> Option<Arc<dyn Committer>> {
        Some(self.committer.clone())
    }
}

impl LineCheck for AvroEncoder {
    fn check(&self, line: &[u8], scratch: &mut Vec<u8>) -> Result<(), String> {
        // A keyed sink's line starts with its kind: a tombstone has nothing to encode.
        match crate::record::changelog::split_kind(line) {
            (kind, _) if kind.is_retraction() => Ok(()),
            (_, row) => self.encode(row, scratch),
        }
    }
}
