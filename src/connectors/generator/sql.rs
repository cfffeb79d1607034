//! The generator as SQL tables: Flink's `datagen` connector where the table is sluice's clicks,
//! and `'connector' = 'nexmark'`, one of Nexmark's tables, so the benchmark's DDL can read the
//! generator instead of `sluice loadgen nexmark`'s files by changing only each raw table's
//! `WITH` options.
//!
//! nexmark-flink's own connector is one table `nexmark` of all three kinds as nested rows
//! (`event_type`, `person ROW<..>`, `auction ROW<..>`, `bid ROW<..>`); sluice's generator makes
//! one stream per kind, so this connector is declared once per table, with the columns and time
//! attribute of `benches/nexmark/ddl.sql`'s raw tables, and nexmark-flink's option names where it
//! has one (`events.num`, `first-event.rate`).

use super::{GeneratorModel, GeneratorSourceConfig, NexmarkTable};
use crate::config::WatermarkConfig;
use crate::connectors::SourceConfig;
use crate::sql::ddl::Table;
use crate::sql::options::{
    duration, option_error, refuse_unknown, required, time_tables, EventTime, ALIGNMENT,
};
use crate::sql::types::SqlType;
use crate::sql::SqlError;

/// An option holding a whole number, if set.
fn number(t: &Table, key: &str, what: &str) -> Result<Option<u64>, SqlError> {
    t.option(key)
        .map(|v| {
            v.parse::<u64>()
                .map_err(|_| option_error(t, key, format!("'{v}' is not {what}")))
        })
        .transpose()
}

/// Flink's `datagen` connector mapped to the built-in generator, where the table is its clicks
/// (`ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT`, any of them, with the time attribute
/// on `ts` in milliseconds). The values are sluice's click model, not Flink's random fields, so
/// per-field options are refused.
pub fn datagen(
    t: &Table,
    time: Option<&EventTime>,
    idle_ms: Option<i64>,
) -> Result<SourceConfig, SqlError> {
    refuse_unknown(t, &["connector", "number-of-rows", "rows-per-second"], None)?;
    let fields = [
        ("ad_id", SqlType::String),
        ("user_id", SqlType::String),
        ("bid", SqlType::Integer),
        ("ts", SqlType::Integer),
    ];
    for c in t.columns.iter().filter(|c| c.computed.is_none()) {
        if !fields.iter().any(|(n, ty)| *n == c.name && *ty == c.ty) {
            return Err(SqlError::span(c.span, format!("table `{}`: connector 'datagen' is sluice's click generator, whose rows are ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT: column `{}` is not one of them", t.name, c.name)));
        }
    }
    // Without a WATERMARK the generator's rows still carry their time (`ts`), but the table
    // has no time attribute: only operators that need none may read it.
    if time.is_some_and(|time| time.field != "ts" || time.unit != "ms") {
        return Err(SqlError::span(t.span, format!("table `{}`: the generator's event time is `ts` in milliseconds: declare rt AS TO_TIMESTAMP_LTZ(ts, 3)", t.name)));
    }
    let count = number(t, "number-of-rows", "a count")?;
    let rate = number(t, "rows-per-second", "a count")?;
    let mut watermark = WatermarkConfig {
        max_out_of_orderness: duration(time.map_or(0, |time| time.out_of_orderness_ms)),
        ..WatermarkConfig::default()
    };
    if let Some(ms) = idle_ms {
        watermark.idle_timeout = duration(ms);
    }
    Ok(SourceConfig::Generator(GeneratorSourceConfig {
        count,
        rate_limit: rate.map(|r| format!("{r}/s")),
        watermark,
        ..GeneratorSourceConfig::default()
    }))
}

const NEXMARK_OPTIONS: [&str; 5] = [
    "connector",
    "table",
    "events.num",
    "first-event.rate",
    "seed",
];

/// A `'connector' = 'nexmark'` table read by a query.
pub fn nexmark(
    t: &Table,
    time: Option<&EventTime>,
    idle_ms: Option<i64>,
) -> Result<SourceConfig, SqlError> {
    let known: Vec<&str> = NEXMARK_OPTIONS.iter().chain(&ALIGNMENT).copied().collect();
    refuse_unknown(t, &known, None)?;
    let table = match required(t, "table")? {
        "person" => NexmarkTable::Person,
        "auction" => NexmarkTable::Auction,
        "bid" => NexmarkTable::Bid,
        other => {
            return Err(option_error(
                t,
                "table",
                format!("'{other}' is not a Nexmark table (expected 'person', 'auction' or 'bid')"),
            ))
        }
    };
    let fields = super::nexmark_fields(table);
    let listed = || fields.join(", ");
    for c in t.columns.iter().filter(|c| c.computed.is_none()) {
        if !fields.contains(&c.name.as_str()) {
            return Err(SqlError::span(
                c.span,
                format!(
                    "table `{}`: Nexmark {} records have no field `{}` (they have {})",
                    t.name,
                    table.name(),
                    c.name,
                    listed()
                ),
            ));
        }
    }
    if time.is_some_and(|time| !fields.contains(&time.field.as_str())) {
        return Err(SqlError::span(
            t.span,
            format!(
                "table `{}`: the time attribute must be computed from a field of the Nexmark {} records (they have {}), e.g. dt AS TO_TIMESTAMP_LTZ(`dateTime`, 3)",
                t.name,
                table.name(),
                listed()
            ),
        ));
    }
    let count = number(t, "events.num", "a whole number")?;
    let rate = number(t, "first-event.rate", "a whole number")?;
    let seed = number(t, "seed", "a whole number")?;
    let (event_time, watermark) = time_tables(t, time, idle_ms)?;
    let mut g = GeneratorSourceConfig {
        model: GeneratorModel::Nexmark,
        table: Some(table),
        count,
        events_per_second: rate,
        event_time,
        watermark,
        ..GeneratorSourceConfig::default()
    };
    if let Some(s) = seed {
        g.seed = s;
    }
    Ok(SourceConfig::Generator(g))
}
