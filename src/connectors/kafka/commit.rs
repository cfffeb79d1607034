//! The exactly-once Kafka sink's commit, run by the checkpoint writer thread: a write-ahead
//! two-phase commit. Shards stage their lines per checkpoint (`connectors::staged`, under the
//! checkpoint directory); once a checkpoint's manifest is durable, the staged lines (and those of
//! any earlier failed checkpoint) go out in ONE transaction with a marker, the checkpoint id as the
//! committed offset of group `<prefix>.checkpoints` on the output topic's partition 0, committed
//! atomically with the records. Recovery reads the marker and rolls an uncommitted checkpoint
//! forward from its staging.

use super::avro::AvroEncoder;
use super::produce::{open_avro, producer_config, send_lines, Bufs, Deliveries, TIMEOUT};
use super::sink::KafkaSinkPlan;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseProducer, Producer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Attempts at reading the marker group's committed offset when they time out.
const COMMITTED_TRIES: u32 = 3;

/// A timeout, not a refusal: worth asking again.
fn is_timeout(e: &KafkaError) -> bool {
    matches!(
        e.rdkafka_error_code(),
        Some(RDKafkaErrorCode::OperationTimedOut | RDKafkaErrorCode::RequestTimedOut)
    )
}

/// The exactly-once sink's committer, run by the checkpoint writer thread.
pub struct KafkaCommitter {
    pub name: String,
    plan: KafkaSinkPlan,
    /// Where the shards stage this sink's lines (the staging files of this path).
    pub stage: PathBuf,
    producer: Mutex<Option<BaseProducer<Deliveries>>>,
    /// `format = "avro"`: the encoder the shards checked the staged lines with (see
    /// [`KafkaCommitter::use_avro`]).
    avro: std::sync::OnceLock<Arc<AvroEncoder>>,
}

impl KafkaCommitter {
    pub fn new(name: &str, plan: &KafkaSinkPlan, stage: PathBuf) -> KafkaCommitter {
        KafkaCommitter {
            name: name.into(),
            plan: plan.clone(),
            stage,
            producer: Mutex::new(None),
            avro: std::sync::OnceLock::new(),
        }
    }

    /// Writes with `enc`, the encoder the shards check lines with, so a commit sends them under
    /// the schema id they were checked against.
    pub fn use_avro(&self, enc: Arc<AvroEncoder>) {
        let _ = self.avro.set(enc);
    }

    /// The encoder: the shards' one, or (recovering a previous run's staging before they start)
    /// the subject's as it is now.
    fn avro(&self) -> Result<Option<Arc<AvroEncoder>>, String> {
        if let Some(a) = self.avro.get() {
            return Ok(Some(a.clone()));
        }
        let Some(enc) = open_avro(&self.plan)? else {
            return Ok(None);
        };
        Ok(Some(self.avro.get_or_init(|| enc).clone()))
    }

    fn marker_group(&self) -> String {
        format!("{}.checkpoints", self.plan.transactional_id_prefix)
    }

    fn marker_tpl(&self, id: Option<u64>) -> Result<TopicPartitionList, String> {
        let mut tpl = TopicPartitionList::new();
        match id {
            Some(id) => tpl
                .add_partition_offset(&self.plan.topic, 0, Offset::Offset(id as i64))
                .map_err(|e| e.to_string())?,
            None => {
                tpl.add_partition(&self.plan.topic, 0);
            }
        }
        Ok(tpl)
    }

    fn marker_consumer(&self) -> Result<BaseConsumer, String> {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.plan.brokers)
            .set("group.id", self.marker_group())
            .set("enable.auto.commit", "false");
        for (k, v) in &self.plan.options {
            c.set(k, v);
        }
        c.create()
            .map_err(|e| format!("cannot create a consumer: {e}"))
    }

    /// The newest checkpoint whose lines are committed to Kafka (0: none).
    pub fn committed_id(&self) -> Result<u64, String> {
        let c = self.marker_consumer()?;
        // A broker busy right after a crash (its group coordinator still loading, transactions of
        // the killed run timing out) can let one metadata request time out: ask again, a few
        // times, before giving up on recovery.
        let mut tries = 0;
        let got = loop {
            tries += 1;
            match c.committed_offsets(self.marker_tpl(None)?, TIMEOUT) {
                Err(e) if tries < COMMITTED_TRIES && is_timeout(&e) => {
                    std::thread::sleep(Duration::from_millis(500));
                }
                r => break r,
            }
        }
        .map_err(|e| format!("reading group `{}`: {e}", self.marker_group()))?;
        Ok(
            match got.find_partition(&self.plan.topic, 0).map(|e| e.offset()) {
                Some(Offset::Offset(o)) if o > 0 => o as u64,
                _ => 0,
            },
        )
    }

    /// Sends the lines staged for checkpoint `id` (and earlier failed ones) in one transaction
    /// with the marker, then deletes their staging.
    pub fn commit(&self, id: u64) -> Result<(), String> {
        let files = crate::connectors::staged::staged_upto(&self.stage, id)
            .map_err(|e| format!("listing staged output: {e}"))?;
        if files.is_empty() {
            return Ok(());
        }
        let mut guard = self.producer.lock().map_err(|_| "producer lock poisoned")?;
        if guard.is_none() {
            let p: BaseProducer<Deliveries> = producer_config(&self.plan)
                .set(
                    "transactional.id",
                    format!("{}-{}", self.plan.transactional_id_prefix, self.name),
                )
                .create_with_context(Deliveries::default())
                .map_err(|e| format!("cannot create a transactional producer: {e}"))?;
            // Fences any earlier incarnation of this job and aborts its open transaction.
            p.init_transactions(TIMEOUT)
                .map_err(|e| format!("initialising transactions: {e}"))?;
            *guard = Some(p);
        }
        let Some(p) = guard.as_ref() else {
            return Err("no producer".into());
        };
        let avro = self.avro()?;
        let res = self.send_in_transaction(p, id, &files, avro.as_deref());
        if res.is_err() {
            let _ = p.abort_transaction(TIMEOUT);
            // A fenced or broken producer is made afresh on the next commit.
            *guard = None;
            return res;
        }
        for f in files {
            std::fs::remove_file(&f).map_err(|e| format!("deleting {}: {e}", f.display()))?;
        }
        Ok(())
    }

    fn send_in_transaction(
        &self,
        p: &BaseProducer<Deliveries>,
        id: u64,
        files: &[PathBuf],
        avro: Option<&AvroEncoder>,
    ) -> Result<(), String> {
        p.begin_transaction()
            .map_err(|e| format!("beginning a transaction: {e}"))?;
        let mut bufs = Bufs::default();
        let mut buf = Vec::new();
        let mut rejected = Vec::new();
        for f in files {
            let file = std::fs::File::open(f).map_err(|e| format!("{}: {e}", f.display()))?;
            let mut r = std::io::BufReader::with_capacity(1 << 20, file);
            loop {
                buf.clear();
                let n = r
                    .read_until(b'\n', &mut buf)
                    .map_err(|e| format!("{}: {e}", f.display()))?;
                if n == 0 {
                    break;
                }
                send_lines(p, &self.plan, &buf, &mut bufs, avro, &mut rejected)?;
                // The shards staged only lines the schema holds; one refused now means the
                // subject's latest schema changed under the running job.
                if let Some((why, _)) = rejected.first() {
                    return Err(format!(
                        "a staged line no longer fits the Avro schema: {why}"
                    ));
                }
            }
        }
        let cgm = self
            .marker_consumer()?
            .group_metadata()
            .ok_or("no group metadata for the marker group")?;
        p.send_offsets_to_transaction(&self.marker_tpl(Some(id))?, &cgm, TIMEOUT)
            .map_err(|e| format!("adding the checkpoint marker: {e}"))?;
        p.commit_transaction(TIMEOUT)
            .map_err(|e| format!("committing the transaction of checkpoint {id}: {e}"))?;
        p.context().check()
    }

    /// Recovery to checkpoint `newest`: commits its staged lines if its transaction never did,
    /// then discards all other staging (lines of checkpoints that never completed are produced
    /// again by the replay).
    pub fn recover(&self, newest: Option<u64>) -> Result<(), String> {
        if let Some(id) = newest {
            if self.committed_id()? < id {
                self.commit(id)?;
            }
        }
        crate::connectors::staged::discard(&self.stage)
            .map_err(|e| format!("discarding staging: {e}"))
    }
}

impl crate::connectors::sink::Committer for KafkaCommitter {
    fn name(&self) -> &str {
        &self.name
    }

    fn recover(&self, newest: Option<&crate::checkpoint::Manifest>) -> Result<(), String> {
        KafkaCommitter::recover(self, newest.map(|m| m.id))
            .map_err(|e| format!("recovering Kafka sink `{}`: {e}", self.name))
    }

    fn commit(&self, id: u64, _recorded: Option<&serde_json::Value>) -> Result<(), String> {
        KafkaCommitter::commit(self, id)
            .map_err(|e| format!("committing Kafka sink `{}`: {e}", self.name))
    }
}
