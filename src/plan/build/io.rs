//! Validation of sources and sinks: what each reads or writes (each connector validates its own
//! table, reporting into a `Check`), the event time and watermark every source shares, and which
//! streams a sink reads.

use super::graph::Graph;
use super::Builder;
use crate::config::{Config, EventTimeConfig, KeyPath, SourceConfig, TimeUnitConfig};
use crate::connectors::check::Check;
use crate::connectors::SourceTable;
use crate::plan::{EventTimePlan, SinkPlan, SourcePlan, TimeUnit, WatermarkPlan};

impl Builder<'_> {
    pub(super) fn source(
        &mut self,
        name: &str,
        s: &SourceConfig,
        checkpointed: bool,
    ) -> SourcePlan {
        let table = s.table();
        let key = |k: &str| KeyPath::new(["sources", name, k]);
        let wm = table.watermark();
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
        let event_time = table
            .event_time()
            .map(|et| self.event_time(name, table, &et));
        if event_time.is_none() && wm.max_drift.is_some() {
            self.err(
                key("watermark").key("max_drift"),
                "watermark alignment needs an event_time on the source (without one its records have no time to align)".into(),
            );
        }
        let mut cx = Check::new("sources", name, checkpointed);
        let source = table.validate(&mut cx);
        for (key, message) in cx.into_problems() {
            self.err(key, message);
        }
        SourcePlan {
            name: name.to_string(),
            source,
            event_time,
            watermark: WatermarkPlan {
                max_out_of_orderness_ms: wm.max_out_of_orderness.as_millis(),
                idle_timeout_ms: wm.idle_timeout.as_millis(),
                max_drift_ms: wm.max_drift.map(|d| d.as_millis()),
            },
        }
    }

    /// A source's `event_time` table, checked, as the plan keeps it.
    fn event_time(
        &mut self,
        name: &str,
        table: &dyn SourceTable,
        et: &EventTimeConfig,
    ) -> EventTimePlan {
        let key = |k: &str| KeyPath::new(["sources", name, k]);
        if et.kafka_timestamp && !table.record_timestamps() {
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
        EventTimePlan {
            max_future_ms: et.max_future.as_millis(),
            allow_negative: et.allow_negative,
            field: et.field.clone(),
            unit: match et.unit {
                TimeUnitConfig::Ms => TimeUnit::Millis,
                TimeUnitConfig::S => TimeUnit::Seconds,
                TimeUnitConfig::Us => TimeUnit::Micros,
                TimeUnitConfig::Rfc3339 => TimeUnit::Rfc3339,
            },
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
            let mut updating = None;
            for input in g.inputs(self, at("inputs"), sink.inputs()) {
                updating = updating.or(input.changelog);
                for e in input.edges {
                    if !inputs.contains(&e) {
                        inputs.push(e);
                    }
                }
            }
            let mut cx = Check::new("sinks", name, config.checkpoint.is_some());
            let built = sink.table().validate(&mut cx);
            let problems = cx.into_problems();
            // A sink refused already is not also told what it cannot take.
            let valid = problems.is_empty();
            for (key, message) in problems {
                self.err(key, message);
            }
            if let Some(from) = updating.filter(|_| valid && !built.changelog().takes_updates()) {
                self.err(at("inputs"), format!("`{from}` is an updating result (+I, -U, +U, -D rows, as a GROUP BY without a window or an outer join gives), but this {} sink writes appends only (as Flink's, it cannot consume update changes): set changelog = \"debezium-json\" on it (in SQL, 'format' = 'debezium-json'), or write to a print sink", built.kind()));
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
