//! Validation of sources and sinks: what each reads or writes, and which streams a sink reads.

use super::graph::Graph;
use super::Builder;
use crate::config::{
    Config, KafkaSourceConfig, KafkaStartConfig, KafkaStartName, KafkaStopAt, KafkaStopName,
    KeyPath, SourceConfig, TimeUnitConfig,
};
use crate::connectors::check::Check;
use crate::connectors::kafka::avro_plan::AvroCheck;
use crate::connectors::kafka::options::kafka_options;
use crate::plan::{
    BackfillPlan, EventTimePlan, KafkaPlan, KafkaStart, SinkPlan, SourceKind, SourcePlan, TimeUnit,
    WatermarkPlan,
};

impl Builder<'_> {
    pub(super) fn source(&mut self, name: &str, s: &SourceConfig) -> SourcePlan {
        let key = |k: &str| KeyPath::new(["sources", name, k]);
        let wm = s.watermark();
        if wm.idle_timeout.as_millis() == 0 {
            self.err(
                key("watermark").key("idle_timeout"),
                "must be longer than 0s".into(),
            );
        }
        if wm.max_drift.is_some_and(|d| d.as_millis() == 0) {
            self.err(
                key("watermark").key("max_drift"),
                "must be longer than 0s (leave it out to never pause the source)".into(),
            );
        }
        let et = s.event_time();
        let kafka = matches!(s, SourceConfig::Kafka(_));
        if et.kafka_timestamp && !kafka {
            self.err(
                key("event_time").key("kafka_timestamp"),
                "only a Kafka source's records have a Kafka timestamp".into(),
            );
        } else if et.kafka_timestamp && !et.field.is_empty() {
            self.err(
                key("event_time"),
                "give either `field` or `kafka_timestamp = true`, not both".into(),
            );
        } else if et.field.is_empty() && !et.kafka_timestamp {
            self.err(
                key("event_time").key("field"),
                "the event-time field name cannot be empty (a Kafka source may use `kafka_timestamp = true` instead)".into(),
            );
        }
        let kind = match s {
            SourceConfig::File(f) => {
                if f.path.is_empty() {
                    self.err(key("path"), "the path cannot be empty".into());
                } else if let Err(e) = glob::Pattern::new(&f.path) {
                    self.err(
                        key("path"),
                        format!("`{}` is not a valid file name or glob: {e}", f.path),
                    );
                }
                SourceKind::File {
                    path: f.path.clone(),
                }
            }
            SourceConfig::Generator(g) => self.generator(name, g, &et),
            SourceConfig::Kafka(k) => SourceKind::Kafka(Box::new(self.kafka(name, k))),
        };
        let backfill = match s {
            SourceConfig::File(f) => self.backfill(name, f),
            SourceConfig::Generator(g) => BackfillPlan {
                rate_per_s: self.rate_limit(name, g.rate_limit.as_deref()),
                ..BackfillPlan::default()
            },
            SourceConfig::Kafka(k) => BackfillPlan {
                rate_per_s: self.rate_limit(name, k.rate_limit.as_deref()),
                ..BackfillPlan::default()
            },
        };
        let csv = self.csv(name, s);
        SourcePlan {
            name: name.to_string(),
            backfill,
            csv,
            kind,
            event_time: EventTimePlan {
                max_future_ms: et.max_future.as_millis(),
                allow_negative: et.allow_negative,
                field: et.field.clone(),
                unit: match et.unit {
                    TimeUnitConfig::Ms => TimeUnit::Millis,
                    TimeUnitConfig::S => TimeUnit::Seconds,
                    TimeUnitConfig::Us => TimeUnit::Micros,
                    TimeUnitConfig::Rfc3339 => TimeUnit::Rfc3339,
                },
            },
            watermark: WatermarkPlan {
                max_out_of_orderness_ms: wm.max_out_of_orderness.as_millis(),
                idle_timeout_ms: wm.idle_timeout.as_millis(),
                max_drift_ms: wm.max_drift.map(|d| d.as_millis()),
            },
        }
    }

    fn kafka(&mut self, name: &str, k: &KafkaSourceConfig) -> KafkaPlan {
        let key = |k: &str| KeyPath::new(["sources", name, k]);
        if k.brokers.trim().is_empty() {
            self.err(
                key("brokers"),
                "the broker list cannot be empty (e.g. \"127.0.0.1:9092\")".into(),
            );
        }
        let topics = match (&k.topic, &k.topics) {
            (Some(t), None) => vec![t.clone()],
            (None, Some(ts)) if !ts.is_empty() => ts.clone(),
            (Some(_), Some(_)) => {
                self.err(key("topics"), "give `topic` or `topics`, not both".into());
                Vec::new()
            }
            _ => {
                self.err(
                    key("topic"),
                    "a Kafka source needs `topic = \"NAME\"` or `topics = [...]`".into(),
                );
                Vec::new()
            }
        };
        if topics.iter().any(|t| t.trim().is_empty()) {
            self.err(key("topics"), "a topic name cannot be empty".into());
        }
        let start = match &k.start {
            None | Some(KafkaStartConfig::Named(KafkaStartName::Committed)) => {
                KafkaStart::Committed
            }
            Some(KafkaStartConfig::Named(KafkaStartName::Earliest)) => KafkaStart::Earliest,
            Some(KafkaStartConfig::Named(KafkaStartName::Latest)) => KafkaStart::Latest,
            Some(KafkaStartConfig::Timestamp { timestamp }) => {
                match crate::record::json::parse_rfc3339_ms(timestamp.as_bytes()) {
                    Some(ms) => KafkaStart::Timestamp(ms),
                    None => {
                        self.err(
                            key("start"),
                            format!("`{timestamp}` is not an RFC 3339 time, e.g. \"2026-11-01T00:00:00Z\""),
                        );
                        KafkaStart::Earliest
                    }
                }
            }
            Some(KafkaStartConfig::Offsets { offsets }) => {
                KafkaStart::Offsets(self.start_offsets(name, &topics, offsets))
            }
        };
        let stop_at_time = match &k.stop_at {
            KafkaStopAt::Timestamp { timestamp } => {
                let ms = crate::record::json::parse_rfc3339_ms(timestamp.as_bytes());
                if ms.is_none() {
                    self.err(
                        key("stop_at"),
                        format!(
                            "`{timestamp}` is not an RFC 3339 time, e.g. \"2026-11-02T00:00:00Z\""
                        ),
                    );
                }
                ms
            }
            _ => None,
        };
        // The Kafka connector's checks of the parts a source shares with a sink.
        let mut cx = Check::new("sources", name, false);
        let avro = cx.avro_source(k, &topics);
        let avro_key = cx.avro_key(k);
        let options = kafka_options(&mut cx, &k.options, &k.options_env, &k.options_file);
        for (key, message) in cx.into_problems() {
            self.err(key, message);
        }
        KafkaPlan {
            brokers: k.brokers.clone(),
            topics,
            group_id: k
                .group_id
                .clone()
                .unwrap_or_else(|| format!("sluice-{name}")),
            start,
            stop_at_end: k.stop_at == KafkaStopAt::Named(KafkaStopName::End),
            stop_at_time,
            kafka_timestamp: k.event_time.kafka_timestamp,
            options,
            metadata: k.metadata.then_some(k.key_format),
            upsert: self.upsert(name, k),
            avro,
            avro_key,
        }
    }

    /// `format = "csv"` with its `csv` table: the columns named or to come from a file header.
    fn csv(&mut self, name: &str, s: &SourceConfig) -> Option<crate::sources::csv::CsvPlan> {
        use crate::config::Format;
        let key = |k: &str| KeyPath::new(["sources", name, k]);
        let (format, csv, file) = match s {
            SourceConfig::File(f) => {
                if f.format == Format::Avro {
                    self.err(key("format"), "Avro is read from Kafka with a schema registry; a file source reads \"json\" or \"csv\"".into());
                }
                (f.format, &f.csv, true)
            }
            SourceConfig::Kafka(k) => (k.format, &k.csv, false),
            SourceConfig::Generator(_) => return None,
        };
        if format != Format::Csv {
            if csv.is_some() {
                self.err(key("csv"), "`csv` is for format = \"csv\"".into());
            }
            return None;
        }
        let c = csv.clone().unwrap_or_default();
        let delimiter = match c.delimiter.as_deref().map(str::as_bytes) {
            None => b',',
            Some(&[d]) if d.is_ascii() && d != b'"' && d != b'\n' && d != b'\r' => d,
            Some(_) => {
                self.err(key("csv").key("delimiter"), "one ASCII character other than a quote or a line end, e.g. \",\", \";\" or \"\\t\"".into());
                b','
            }
        };
        if c.header && !file {
            self.err(
                key("csv").key("header"),
                "a Kafka record has no header line: name the columns with `columns = [...]`".into(),
            );
        } else if !c.header && c.columns.is_empty() {
            self.err(key("csv"), "name the columns: `csv = { header = true }` (the first line of each file) or `csv = { columns = [\"ts\", ...] }`".into());
        }
        let mut seen = std::collections::HashSet::new();
        for col in &c.columns {
            if col.is_empty() || !seen.insert(col.as_str()) {
                self.err(
                    key("csv").key("columns"),
                    format!("`{col}`: column names must be non-empty and distinct"),
                );
            }
        }
        Some(crate::sources::csv::CsvPlan {
            header: c.header,
            columns: c.columns,
            delimiter,
        })
    }

    /// `changelog = "upsert"`: tombstones carry their key's fields and an event time, so the key
    /// must be a JSON object and the time a top-level epoch-ms field or the Kafka timestamp.
    fn upsert(&mut self, name: &str, k: &KafkaSourceConfig) -> Option<Option<String>> {
        use crate::config::{KafkaChangelog, KafkaKeyFormat, TimeUnitConfig};
        if k.changelog != KafkaChangelog::Upsert {
            return None;
        }
        let key = |k: &str| KeyPath::new(["sources", name, k]);
        if !matches!(k.key_format, KafkaKeyFormat::Json | KafkaKeyFormat::Avro) {
            self.err(key("key_format"), "changelog = \"upsert\" reads the table key from the record key: set key_format = \"json\" (a JSON object of the key fields) or \"avro\" (a record)".into());
        }
        let et = &k.event_time;
        if et.kafka_timestamp {
            return Some(None);
        }
        if et.field.contains('.') || et.unit != TimeUnitConfig::Ms {
            self.err(key("event_time"), "a tombstone has no value to read its time from: with changelog = \"upsert\" the event time must be a top-level epoch-ms field (it is then taken from the Kafka timestamp for tombstones) or kafka_timestamp = true".into());
        }
        Some(Some(et.field.clone()))
    }

    /// `start = { offsets = { "N" | "TOPIC/N" = OFFSET } }` as (topic, partition, offset).
    fn start_offsets(
        &mut self,
        name: &str,
        topics: &[String],
        offsets: &std::collections::BTreeMap<String, i64>,
    ) -> Vec<(String, i32, i64)> {
        let mut out = Vec::new();
        for (p, &offset) in offsets {
            let at = KeyPath::new(["sources", name, "start", "offsets", p]);
            let (topic, n) = match p.rsplit_once('/') {
                Some((t, n)) => (Some(t.to_string()), n),
                None => (
                    topics.first().filter(|_| topics.len() == 1).cloned(),
                    p.as_str(),
                ),
            };
            let Some(topic) = topic else {
                self.err(at, format!("`{p}`: this source reads several topics; name the partition as \"TOPIC/{p}\""));
                continue;
            };
            if !topics.contains(&topic) {
                self.err(at, format!("`{topic}` is not a topic of this source"));
                continue;
            }
            match n.parse::<i32>() {
                Ok(n) if n >= 0 && offset >= 0 => out.push((topic, n, offset)),
                Ok(_) if offset < 0 => self.err(at, format!("offset {offset} is negative")),
                _ => self.err(at, format!("`{n}` is not a partition number")),
            }
        }
        out
    }

    /// `rate_limit = "N/s"` of any source kind: records per second, over all its partitions.
    fn rate_limit(&mut self, name: &str, r: Option<&str>) -> Option<f64> {
        let r = r?;
        let n = r
            .trim()
            .strip_suffix("/s")
            .and_then(|n| n.trim().parse::<f64>().ok());
        match n {
            Some(n) if n.is_finite() && n > 0.0 => Some(n),
            _ => {
                self.err(
                    KeyPath::new(["sources", name, "rate_limit"]),
                    format!("`{r}` is not a rate: expected records per second, e.g. \"50000/s\""),
                );
                None
            }
        }
    }

    fn backfill(&mut self, name: &str, f: &crate::config::FileSourceConfig) -> BackfillPlan {
        let key = |k: &str| KeyPath::new(["sources", name, k]);
        let rate_per_s = self.rate_limit(name, f.rate_limit.as_deref());
        let start_ms = f.start_time.as_ref().and_then(|t| {
            let ms = crate::record::json::parse_rfc3339_ms(t.as_bytes());
            if ms.is_none() {
                self.err(
                    key("start_time"),
                    format!("`{t}` is not an RFC 3339 time, e.g. \"2026-11-01T00:00:00Z\""),
                );
            }
            ms
        });
        BackfillPlan {
            rate_per_s,
            start_offset: f.start_offset.unwrap_or(0),
            start_ms,
        }
    }

    pub(super) fn sinks(&mut self, config: &Config, g: &mut Graph<'_>) -> Vec<SinkPlan> {
        // Every output on disk, with the key naming it: two outputs never share one.
        let mut paths: Vec<(std::path::PathBuf, KeyPath)> = Vec::new();
        if let Some(d) = &config.dead_letter {
            if d.path.as_os_str().is_empty() {
                self.err(
                    KeyPath::new(["dead_letter", "path"]),
                    "the path cannot be empty".into(),
                );
            }
            paths.push((d.path.clone(), KeyPath::new(["dead_letter", "path"])));
        }
        let mut plans = Vec::new();
        for (name, sink) in &config.sinks {
            let at = |k: &str| KeyPath::new(["sinks", name, k]);
            if sink.inputs().is_empty() {
                self.err(at("inputs"), "a sink needs at least one input".into());
            }
            let mut inputs = Vec::new();
            for input in g.inputs(self, at("inputs"), sink.inputs()) {
                for e in input.edges {
                    if !inputs.contains(&e) {
                        inputs.push(e);
                    }
                }
            }
            let mut cx = Check::new("sinks", name, config.checkpoint.is_some());
            let built = sink.table().validate(&mut cx);
            for (key, message) in cx.into_problems() {
                self.err(key, message);
            }
            for out in built.outputs() {
                if out.path.as_os_str().is_empty() {
                    continue;
                }
                if let Some((_, other)) = paths.iter().find(|(p, _)| p == out.path) {
                    let msg = format!(
                        "`{}` is also written by `{other}`; two outputs cannot share {}",
                        out.path.display(),
                        out.noun
                    );
                    self.err(at(out.key), msg);
                }
                paths.push((out.path.to_path_buf(), at(out.key)));
            }
            plans.push(SinkPlan {
                name: name.clone(),
                sink: built,
                inputs,
            });
        }
        plans
    }
}
