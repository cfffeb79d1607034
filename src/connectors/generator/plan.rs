//! Validation of `type = "generator"` sources into a [`GeneratorPlan`] (`model = "clicks"`) or a
//! [`NexmarkSourcePlan`] (`model = "nexmark"`): each model's keys checked, the other model's
//! refused by name, and the defaults of the keys a user left out filled in from
//! [`crate::config::defaults`].

use std::sync::Arc;

use super::config::{GeneratorModel, GeneratorSourceConfig, NexmarkTable};
use super::source::{ClickSource, NexmarkTableSource};
use super::{GeneratorPlan, NexmarkSourcePlan};
use crate::config::{defaults, EventTimeConfig, KeyPath, TimeUnitConfig, WatermarkConfig};
use crate::connectors::check::Check;
use crate::connectors::source::{parse_rate, Source};
use crate::connectors::SourceTable;

impl SourceTable for GeneratorSourceConfig {
    fn event_time(&self) -> Option<std::borrow::Cow<'_, EventTimeConfig>> {
        // A generator's events always carry their time (the kind's default field when unset).
        Some(GeneratorSourceConfig::event_time(self))
    }

    fn watermark(&self) -> &WatermarkConfig {
        &self.watermark
    }

    fn fields(&self) -> Option<&'static [&'static str]> {
        match (self.model, self.table) {
            (GeneratorModel::Clicks, _) => Some(&super::bind::FIELDS),
            (GeneratorModel::Nexmark, Some(t)) => Some(super::nexmark_fields(t)),
            // No table: refused already; nothing is known of its records.
            (GeneratorModel::Nexmark, None) => None,
        }
    }

    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Source> {
        let et = GeneratorSourceConfig::event_time(self);
        let model = match self.model {
            GeneratorModel::Clicks => Ok(clicks(cx, self, &et)),
            GeneratorModel::Nexmark => Err(nexmark(cx, self, &et)),
        };
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
        match model {
            Ok(model) => Arc::new(ClickSource { model, rate_per_s }),
            Err(table) => Arc::new(NexmarkTableSource { table, rate_per_s }),
        }
    }
}

/// The click model's plan, its problems reported to `cx`.
fn clicks(cx: &mut Check<'_>, g: &GeneratorSourceConfig, et: &EventTimeConfig) -> GeneratorPlan {
    let name = cx.name;
    let key = |k: &str| KeyPath::new(["sources", name, k]);
    if g.table.is_some() {
        cx.err(
                key("table"),
                "only model = \"nexmark\" has tables; the click model makes one stream (set model = \"nexmark\" or leave table out)".into(),
            );
    }
    if et.field != "ts" || et.unit != TimeUnitConfig::Ms {
        cx.err(key("event_time"), "a generator's events carry their time in `ts`, epoch milliseconds: use { field = \"ts\", unit = \"ms\" } or leave event_time out".into());
    }
    let plan = GeneratorPlan {
        seed: g.seed,
        keys: g.keys.unwrap_or_else(defaults::keys),
        zipf_exponent: g.zipf_exponent.unwrap_or_else(defaults::zipf_exponent),
        celebrity_share: g.celebrity_share.unwrap_or_else(defaults::celebrity_share),
        users: g.users.unwrap_or_else(defaults::users),
        events_per_second: g
            .events_per_second
            .unwrap_or_else(defaults::events_per_second),
        start_ms: g.start_ms,
        out_of_orderness_ms: g
            .out_of_orderness
            .unwrap_or_else(defaults::generator_out_of_orderness)
            .as_millis(),
        late_fraction: g.late_fraction.unwrap_or_else(defaults::late_fraction),
        late_by_ms: g.late_by.unwrap_or_else(defaults::late_by).as_millis(),
        count: g.count,
    };
    for (k, v) in [
        ("keys", plan.keys),
        ("users", plan.users),
        ("events_per_second", plan.events_per_second),
    ] {
        if v == 0 {
            cx.err(key(k), "must be at least 1".into());
        }
    }
    for (k, v) in [
        ("celebrity_share", plan.celebrity_share),
        ("late_fraction", plan.late_fraction),
    ] {
        if !(0.0..=1.0).contains(&v) {
            cx.err(
                key(k),
                format!("{v} is not a share: must be between 0.0 and 1.0"),
            );
        }
    }
    if !(plan.zipf_exponent.is_finite() && plan.zipf_exponent >= 0.0) {
        cx.err(
            key("zipf_exponent"),
            format!(
                "{} is not allowed: must be a finite number >= 0.0",
                plan.zipf_exponent
            ),
        );
    }
    plan
}

/// A Nexmark table's plan, its problems reported to `cx`.
fn nexmark(
    cx: &mut Check<'_>,
    g: &GeneratorSourceConfig,
    et: &EventTimeConfig,
) -> NexmarkSourcePlan {
    let name = cx.name;
    let key = |k: &str| KeyPath::new(["sources", name, k]);
    for k in g.click_keys_given() {
        cx.err(
                key(k),
                "applies to model = \"clicks\" only; model = \"nexmark\" draws its ids, skew and timing as the Nexmark generator does (its keys: table, seed, events_per_second, start_ms, count, rate_limit, event_time, watermark)".into(),
            );
    }
    let table = match g.table {
        Some(t) => t,
        None => {
            cx.err(
                    key("table"),
                    "model = \"nexmark\" needs table = \"person\", \"auction\" or \"bid\" (one source per table)".into(),
                );
            NexmarkTable::Bid
        }
    };
    let fields = super::nexmark_fields(table);
    if g.table.is_some() && !et.field.is_empty() && !fields.contains(&et.field.as_str()) {
        let hint = crate::config::suggest::hint(&et.field, fields.iter().copied());
        cx.err(
                key("event_time").key("field"),
                format!(
                    "Nexmark {} records have no field `{}` (they have {}; the default is `dateTime`){hint}",
                    table.name(),
                    et.field,
                    fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", "),
                ),
            );
    }
    let first_event_rate = g
        .events_per_second
        .unwrap_or_else(defaults::nexmark_events_per_second);
    if first_event_rate == 0 {
        cx.err(key("events_per_second"), "must be at least 1".into());
    }
    NexmarkSourcePlan {
        table,
        seed: g.seed,
        first_event_rate,
        start_ms: g.start_ms,
        count: g.count,
    }
}

#[cfg(test)]
mod tests;
