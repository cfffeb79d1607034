//! Read positions of a job that reads Kafka, in checkpoints, and each shard's consumer. Such a
//! job's position is not one chunk number but each partition's own: for a Kafka partition the
//! next offset after the chunks a checkpoint covers (every receiver learns it from chunk-end
//! markers) and the end offset a bounded job stops at (taken when the job first started, so a
//! restored job stops where the uninterrupted one would); for a file or the generator the number
//! of its chunks the checkpoint covers. A resumed job numbers its chunks afresh from there. Both
//! follow the chunk order in the checkpoint's `time` section. Never reads records.

use super::checkpointing::Resume;
use super::RuntimeError;
use crate::checkpoint::codec::{Dec, Enc};
use crate::plan::{Plan, SourceKind};
use crate::sources::kafka::{Avro, KafkaReader};
use crate::sources::{PartKind, Partition};
use crate::time::WatermarkTracker;

/// Appends each partition's (next offset or chunks done, end offset) to a checkpoint (-1: none).
pub fn encode(next: &[i64], parts: &[Partition], e: &mut Enc) {
    e.u64(parts.len() as u64);
    for (p, n) in parts.iter().zip(next) {
        let end = match &p.kind {
            PartKind::Kafka(k) => k.end.unwrap_or(-1),
            _ => -1,
        };
        e.i64(*n);
        e.i64(end);
    }
}

/// Moves every Kafka partition to where the checkpoint being resumed left it.
pub fn restore(parts: &mut [Partition], r: &Resume) -> Result<(), RuntimeError> {
    let fail = |m: String| RuntimeError::Checkpoint(format!("checkpoint {}: {m}", r.id));
    let time = r
        .snapshots
        .first()
        .and_then(|s| s.sections.iter().find(|x| x.name == "time"))
        .ok_or_else(|| fail("no watermark state".into()))?;
    let mut d = Dec::new(&time.bytes);
    let init: Vec<(i64, bool)> = parts
        .iter()
        .map(|p| (p.max_out_of_orderness_ms, true))
        .collect();
    WatermarkTracker::new(&init).decode(&mut d).map_err(fail)?;
    d.i64("watermark").map_err(fail)?;
    if d.u8("chunk order").map_err(fail)? != 0 {
        return Err(fail(
            "a job reading Kafka has a checkpoint with an aligned chunk order".into(),
        ));
    }
    let n = d.count(16, "kafka positions").map_err(fail)?;
    if n != parts.len() {
        return Err(fail(format!(
            "it holds positions of {n} partitions; this job reads {}",
            parts.len()
        )));
    }
    for p in parts.iter_mut() {
        let next = d.i64("kafka offset").map_err(fail)?;
        let end = d.i64("kafka end offset").map_err(fail)?;
        match &mut p.kind {
            PartKind::Kafka(k) => {
                if next >= 0 {
                    k.start = next;
                }
                k.end = (end >= 0).then_some(end);
                tracing::info!(partition = %p.name, offset = k.start, "kafka partition resumes at its checkpointed offset");
            }
            _ => {
                p.first_chunk = next.max(0) as u64;
                tracing::info!(partition = %p.name, chunk = p.first_chunk, "partition resumes after its checkpointed chunks");
            }
        }
    }
    Ok(())
}

/// Per source: its Avro reader schema and registry, fetched once for all shards, and its keys'
/// registry (`key_format = "avro"`). A missing subject or an unreachable registry fails the start,
/// naming the source.
pub fn avro_sources(plan: &Plan) -> Result<Vec<Avro>, RuntimeError> {
    use std::sync::Arc;
    plan.sources
        .iter()
        .map(|src| {
            let SourceKind::Kafka(k) = &src.kind else {
                return Ok(Avro::default());
            };
            let key = k
                .avro_key
                .as_ref()
                .map(|r| Arc::new(crate::connectors::kafka::avro::AvroSource::keys(r, plan.runtime.max_line_bytes)));
            let Some(a) = &k.avro else {
                return Ok(Avro { value: None, key });
            };
            let s = crate::connectors::kafka::avro::AvroSource::open(a, plan.runtime.max_line_bytes).map_err(
                |message| RuntimeError::Setup {
                    what: format!("source `{}`", src.name),
                    message,
                },
            )?;
            tracing::info!(source = %src.name, subject = %a.subject, version = s.version, "avro reader schema");
            Ok(Avro {
                value: Some(Arc::new(s)),
                key,
            })
        })
        .collect()
}

/// Shard `id`'s consumer: the Kafka partitions at indices `i` with `i % shards == id` (the padded
/// chunk order gives their chunks to this shard alone).
pub fn reader(
    plan: &Plan,
    parts: &[Partition],
    id: usize,
    shards: usize,
    avro: &[Avro],
) -> Result<Option<KafkaReader>, RuntimeError> {
    let mut reader = KafkaReader::default();
    for (si, src) in plan.sources.iter().enumerate() {
        let SourceKind::Kafka(kp) = &src.kind else {
            continue;
        };
        let mine: Vec<_> = parts
            .iter()
            .enumerate()
            .filter(|(i, p)| i % shards == id && p.source == si)
            .filter_map(|(i, p)| match &p.kind {
                PartKind::Kafka(k) => Some((i as u16, k, k.start)),
                _ => None,
            })
            .collect();
        if mine.is_empty() {
            continue;
        }
        reader
            .add(kp, &mine, avro.get(si).unwrap_or(&Avro::default()))
            .map_err(|message| RuntimeError::Setup {
                what: format!("source `{}`", src.name),
                message,
            })?;
    }
    Ok((!reader.is_empty()).then_some(reader))
}
