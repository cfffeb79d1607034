//! `'connector' = 'nexmark'`: one of Nexmark's tables from the built-in generator
//! (`type = "generator"`, `model = "nexmark"`), so the benchmark's DDL can read the generator
//! instead of `sluice loadgen nexmark`'s files by changing only each raw table's `WITH` options.
//!
//! nexmark-flink's own connector is one table `nexmark` of all three kinds as nested rows
//! (`event_type`, `person ROW<..>`, `auction ROW<..>`, `bid ROW<..>`); sluice's generator makes
//! one stream per kind, so this connector is declared once per table, with the columns and time
//! attribute of `benches/nexmark/ddl.sql`'s raw tables, and nexmark-flink's option names where it
//! has one (`events.num`, `first-event.rate`).

use super::connectors::{option_error, refuse_unknown, required, time_toml, EventTime, ALIGNMENT};
use super::ddl::Table;
use super::error::SqlError;
use crate::connectors::generator::NexmarkTable;

const OPTIONS: [&str; 5] = [
    "connector",
    "table",
    "events.num",
    "first-event.rate",
    "seed",
];

/// The `[sources.NAME]` body (after its header) for a `'connector' = 'nexmark'` table.
pub(super) fn nexmark_source(t: &Table, time: &EventTime, idle: &str) -> Result<String, SqlError> {
    let known: Vec<&str> = OPTIONS.iter().chain(&ALIGNMENT).copied().collect();
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
    let fields = crate::connectors::generator::nexmark_fields(table);
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
    if !fields.contains(&time.field.as_str()) {
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
    let number = |key: &str| -> Result<Option<u64>, SqlError> {
        t.option(key)
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| option_error(t, key, format!("'{v}' is not a whole number")))
            })
            .transpose()
    };
    let mut out = format!(
        "type = \"generator\"\nmodel = \"nexmark\"\ntable = \"{}\"\n",
        table.name()
    );
    if let Some(n) = number("events.num")? {
        out += &format!("count = {n}\n");
    }
    if let Some(r) = number("first-event.rate")? {
        out += &format!("events_per_second = {r}\n");
    }
    if let Some(s) = number("seed")? {
        out += &format!("seed = {s}\n");
    }
    Ok(out + &time_toml(t, time, idle)?)
}
