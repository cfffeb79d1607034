//! The Kafka source as the plan and the runtime see it: each partition a log one shard owns
//! (partition `i` of the run belongs to shard `i % shards`), read by that shard's
//! [`super::chunks`] reader through its consumer ([`super::read`]); late records are read back
//! by offset.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::chunks::{start_of, KafkaChunks, KafkaRecall};
use super::config::KafkaSourceConfig;
use super::read::{Avro, HighWatch, KafkaReader};
use super::source_plan::{kafka_plan, KafkaPlan};
use crate::config::{EventTimeConfig, WatermarkConfig};
use crate::connectors::check::Check;
use crate::connectors::csv::check::csv_plan;
use crate::connectors::csv::{CsvPlan, CsvShape};
use crate::connectors::source::{
    log_records_per_chunk, parse_rate, Extent, Found, OpenCx, OpenSource, Partition, ReaderCx,
    Recall, Source, SourceError, SourceReader,
};
use crate::connectors::SourceTable;
use crate::record::bind::RecordParser;

/// `[sources.NAME] type = "kafka"`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct KafkaSource {
    pub plan: KafkaPlan,
    /// `format = "csv"`: how each record's value becomes a JSON record.
    pub csv: Option<CsvPlan>,
    pub rate_per_s: Option<f64>,
}

impl SourceTable for KafkaSourceConfig {
    fn event_time(&self) -> Option<std::borrow::Cow<'_, EventTimeConfig>> {
        self.event_time.as_ref().map(std::borrow::Cow::Borrowed)
    }

    fn watermark(&self) -> &WatermarkConfig {
        &self.watermark
    }

    fn changelog(&self) -> bool {
        self.changelog.debezium()
    }

    fn record_timestamps(&self) -> bool {
        true
    }

    fn flink_notes(&self) -> Vec<&'static str> {
        super::sql::flink_source_notes(self)
    }

    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Source> {
        let plan = kafka_plan(cx, self);
        let rate_per_s = self
            .rate_limit
            .as_deref()
            .and_then(|r| match parse_rate(r) {
                Ok(n) => Some(n),
                Err(m) => {
                    cx.err(cx.key("rate_limit"), m);
                    None
                }
            });
        let csv = csv_plan(cx, self.format, self.csv.as_ref(), false);
        Arc::new(KafkaSource {
            plan,
            csv,
            rate_per_s,
        })
    }
}

impl Source for KafkaSource {
    fn kind(&self) -> &'static str {
        "kafka"
    }

    fn describe(&self) -> String {
        let changes = match (self.plan.debezium, self.plan.avro.is_some()) {
            (true, true) => " (Debezium Avro changes: updating)",
            (true, false) => " (Debezium JSON changes: updating)",
            (false, _) => "",
        };
        let (topics, brokers) = (self.plan.topics.join(", "), &self.plan.brokers);
        format!("kafka {topics} at {brokers}{changes}")
    }

    fn rate_limit(&self) -> Option<f64> {
        self.rate_per_s
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSource>, SourceError> {
        let parts = super::discover::discover(cx.name, &self.plan)
            .map_err(|e| SourceError::Other(e.to_string()))?;
        let found = parts
            .iter()
            .map(|p| Found {
                name: format!("{}/{}", p.topic, p.partition),
                extent: Extent::Log {
                    start: p.start,
                    end: p.end,
                },
            })
            .collect();
        Ok(Arc::new(OpenKafka {
            plan: self.plan.clone(),
            topics: parts.into_iter().map(|p| (p.topic, p.partition)).collect(),
            found,
            avro: avro_schemas(cx, &self.plan)?,
            csv: self
                .csv
                .as_ref()
                .map(|c| Arc::new(CsvShape::new(&c.columns, c.delimiter))),
            event_time: cx.event_time.cloned(),
            idle: Duration::from_millis(cx.idle_timeout_ms.max(0) as u64),
        }))
    }
}

/// The source's Avro reader schema and registry, fetched once for all shards, and its keys'
/// registry (`key_format = "avro"`). A missing subject or an unreachable registry fails the
/// start, naming the source.
fn avro_schemas(cx: &OpenCx<'_>, k: &KafkaPlan) -> Result<Avro, SourceError> {
    use super::avro::AvroSource;
    let key = k
        .avro_key
        .as_ref()
        .map(|r| Arc::new(AvroSource::keys(r, cx.max_line_bytes)));
    let Some(a) = &k.avro else {
        return Ok(Avro { value: None, key });
    };
    let s = AvroSource::open(a, cx.max_line_bytes)
        .map_err(|m| SourceError::Other(format!("source `{}`: {m}", cx.name)))?;
    tracing::info!(source = %cx.name, subject = %a.subject, version = s.version, "avro reader schema");
    Ok(Avro {
        value: Some(Arc::new(s)),
        key,
    })
}

/// A Kafka source opened for a run: its partitions and what every shard's consumer shares.
struct OpenKafka {
    plan: KafkaPlan,
    /// Each partition's (topic, partition), by index.
    topics: Vec<(String, i32)>,
    found: Vec<Found>,
    avro: Avro,
    csv: Option<Arc<CsvShape>>,
    event_time: Option<crate::plan::EventTimePlan>,
    idle: Duration,
}

impl OpenSource for OpenKafka {
    fn partitions(&self) -> &[Found] {
        &self.found
    }

    fn reader(&self, cx: &ReaderCx<'_>) -> Result<Box<dyn SourceReader>, String> {
        // Shard `id` owns the partitions at run indices `i` with `i % shards == id` (the padded
        // chunk order gives their chunks to this shard alone).
        let mine: Vec<(u16, &Partition)> = cx
            .parts
            .iter()
            .enumerate()
            .filter(|(i, p)| p.source == cx.source && i % cx.shards == cx.shard)
            .map(|(i, p)| (i as u16, p))
            .collect();
        let mut reader = KafkaReader::default();
        let owned: Vec<_> = mine
            .iter()
            .map(|(i, p)| {
                let (topic, partition) = &self.topics[p.index];
                (*i, topic.as_str(), *partition, start_of(p))
            })
            .collect();
        if !owned.is_empty() {
            reader.add(&self.plan, &owned, &self.avro)?;
        }
        let parser = match &self.event_time {
            Some(et) if self.plan.kafka_timestamp => {
                RecordParser::keyed(cx.bindings)?.with_guard(et.max_future_ms, et.allow_negative)
            }
            et => crate::connectors::source::record_parser(et.as_ref(), cx.bindings)?,
        };
        Ok(Box::new(KafkaChunks {
            reader,
            parser,
            csv: self.csv.clone(),
            kafka_timestamp: self.plan.kafka_timestamp,
            idle: self.idle,
            shard: cx.shard,
            per_chunk: log_records_per_chunk(cx.chunk_bytes),
            max_line_bytes: cx.max_line_bytes,
            first: cx.parts.iter().map(start_of).collect(),
            ends: cx
                .parts
                .iter()
                .map(|p| match p.extent {
                    Extent::Log { end, .. } => end,
                    Extent::Ranges { .. } => None,
                })
                .collect(),
            cur: None,
            buf: Vec::new(),
            csv_line: Vec::new(),
            converted: false,
            changes: self.plan.debezium.then(Default::default),
            last: (0, None),
            bytes_read: 0,
            committed: Instant::now(),
            serviced: Instant::now(),
            stalled_since: None,
        }))
    }

    fn recaller(&self) -> Box<dyn Recall> {
        Box::new(KafkaRecall(self.topics.clone()))
    }

    fn log_ends(
        &self,
        parts: &[(u16, &Partition)],
    ) -> Result<Option<Box<dyn crate::metrics::LogEnds>>, String> {
        let watched: Vec<_> = parts
            .iter()
            .map(|(i, p)| {
                let (topic, partition) = &self.topics[p.index];
                (*i, topic.clone(), *partition, start_of(p))
            })
            .collect();
        Ok(Some(Box::new(HighWatch::new(&self.plan, &watched)?)))
    }
}
