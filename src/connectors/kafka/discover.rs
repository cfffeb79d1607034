//! Before the run: a Kafka source's partitions and the offsets each starts at (`start`: earliest,
//! latest, the group's committed offsets, a time, or offsets per partition) and, for a bounded job,
//! ends at (`stop_at`: the end offsets, or the first record at or after a time, as of the job's
//! first start). A checkpoint's positions replace both on restore.

use super::read::client_config;
use super::source_plan::{KafkaPlan, KafkaStart};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use std::time::Duration;

/// How long discovery waits for the brokers before the job is refused.
const METADATA_TIMEOUT: Duration = Duration::from_secs(15);

/// One Kafka partition as discovery finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaPart {
    pub topic: String,
    pub partition: i32,
    /// First offset to read (a checkpoint's position replaces it on restore).
    pub start: i64,
    /// `stop_at = "end"`: the partition's end offset when the job started.
    pub end: Option<i64>,
}

/// Error from discovery, with the source it concerns.
#[derive(Debug, thiserror::Error)]
#[error("source `{source_name}` (kafka {brokers}): {message}")]
pub struct DiscoveryError {
    pub source_name: String,
    pub brokers: String,
    pub message: String,
}

/// Lists the partitions of the plan's topics with their start and end offsets.
pub fn discover(source_name: &str, plan: &KafkaPlan) -> Result<Vec<KafkaPart>, DiscoveryError> {
    let fail = |message: String| DiscoveryError {
        source_name: source_name.into(),
        brokers: plan.brokers.clone(),
        message,
    };
    let consumer =
        crate::connectors::kafka::client::consumer(&client_config(plan)).map_err(fail)?;
    let mut out = Vec::new();
    // (log start, log end) of each partition, asked once and used by every rule below.
    let mut logs = Vec::new();
    for topic in &plan.topics {
        let md = crate::connectors::kafka::client::metadata(&consumer, topic, METADATA_TIMEOUT)
            .map_err(|e| fail(format!("cannot read metadata of topic `{topic}`: {e}")))?;
        let t = md
            .topics()
            .iter()
            .find(|t| t.name() == topic)
            .ok_or_else(|| fail(format!("topic `{topic}` does not exist")))?;
        if let Some(e) = t.error() {
            return Err(fail(format!("topic `{topic}`: {e:?}")));
        }
        if t.partitions().is_empty() {
            return Err(fail(format!("topic `{topic}` does not exist")));
        }
        let mut ids: Vec<i32> = t.partitions().iter().map(|p| p.id()).collect();
        ids.sort_unstable();
        for p in ids {
            let (low, high) = consumer
                .fetch_watermarks(topic, p, METADATA_TIMEOUT)
                .map_err(|e| fail(format!("cannot read offsets of {topic}/{p}: {e}")))?;
            out.push(KafkaPart {
                topic: topic.clone(),
                partition: p,
                start: low,
                end: plan.stop_at_end.then_some(high),
            });
            logs.push((low, high));
        }
    }
    resolve_starts(&consumer, plan, &mut out, &logs).map_err(fail)?;
    if let Some(ms) = plan.stop_at_time {
        resolve_stops(&consumer, ms, &mut out, &logs).map_err(fail)?;
    }
    Ok(out)
}

/// Replaces each partition's earliest offset by where `plan.start` says to begin; `logs`:
/// each partition's (log start, log end).
fn resolve_starts<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    plan: &KafkaPlan,
    parts: &mut [KafkaPart],
    logs: &[(i64, i64)],
) -> Result<(), String> {
    let mut tpl = TopicPartitionList::new();
    for p in parts.iter() {
        tpl.add_partition(&p.topic, p.partition);
    }
    let found = match &plan.start {
        KafkaStart::Earliest => return Ok(()),
        KafkaStart::Latest => {
            for (p, (_, high)) in parts.iter_mut().zip(logs) {
                p.start = *high;
            }
            return Ok(());
        }
        KafkaStart::Committed | KafkaStart::Offsets(_) => consumer
            .committed_offsets(tpl, METADATA_TIMEOUT)
            .map_err(|e| format!("cannot read group `{}`'s offsets: {e}", plan.group_id))?,
        KafkaStart::Timestamp(ms) => {
            let mut by_time = TopicPartitionList::new();
            for p in parts.iter() {
                by_time
                    .add_partition_offset(&p.topic, p.partition, Offset::Offset(*ms))
                    .map_err(|e| e.to_string())?;
            }
            consumer
                .offsets_for_times(by_time, METADATA_TIMEOUT)
                .map_err(|e| format!("cannot look up offsets for a time: {e}"))?
        }
    };
    for (p, (_, high)) in parts.iter_mut().zip(logs) {
        let Some(e) = found.find_partition(&p.topic, p.partition) else {
            continue;
        };
        match e.offset() {
            Offset::Offset(o) if o >= p.start => p.start = o,
            // No record at or after the time: start at the end.
            Offset::End => p.start = *high,
            // Nothing committed (or committed before the log start): from the earliest.
            _ => {}
        }
    }
    if let KafkaStart::Offsets(list) = &plan.start {
        for (topic, n, offset) in list {
            let Some((p, (low, high))) = parts
                .iter_mut()
                .zip(logs)
                .find(|(p, _)| p.topic == *topic && p.partition == *n)
            else {
                return Err(format!(
                    "`start.offsets`: topic `{topic}` has no partition {n}"
                ));
            };
            // An offset already deleted starts at the log's start; one past its end, at the end.
            p.start = (*offset).clamp(*low, *high);
        }
    }
    Ok(())
}

/// `stop_at = { timestamp }`: each partition ends before its first record at or after the time
/// (at its current end when it has none).
fn resolve_stops<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    ms: i64,
    parts: &mut [KafkaPart],
    logs: &[(i64, i64)],
) -> Result<(), String> {
    let mut by_time = TopicPartitionList::new();
    for p in parts.iter() {
        by_time
            .add_partition_offset(&p.topic, p.partition, Offset::Offset(ms))
            .map_err(|e| e.to_string())?;
    }
    let found = consumer
        .offsets_for_times(by_time, METADATA_TIMEOUT)
        .map_err(|e| format!("cannot look up offsets for `stop_at`: {e}"))?;
    for (p, (_, high)) in parts.iter_mut().zip(logs) {
        let at = found
            .find_partition(&p.topic, p.partition)
            .map(|e| e.offset());
        p.end = Some(match at {
            Some(Offset::Offset(o)) => o,
            _ => *high,
        });
    }
    Ok(())
}
