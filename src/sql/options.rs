//! A table's `WITH` options as the connectors read them: the helpers every connector's SQL
//! mapping shares (an option required or refused, the JSON format's options, a format not
//! supported, Flink's watermark alignment options), and the event time and watermark every
//! source table has. Every option is either mapped by the table's connector or refused: none is
//! ignored silently.

use std::collections::BTreeMap;

use super::ddl::Table;
use super::error::SqlError;
use super::types::SqlType;
use crate::config::{defaults, EventTimeConfig, TimeUnitConfig, WatermarkConfig};

/// Where a source table's event time comes from.
pub struct EventTime {
    /// The time attribute column (`rt` of `WATERMARK FOR rt`).
    pub column: String,
    /// The record field holding it, and its unit (`ms` or `s`).
    pub field: String,
    pub unit: &'static str,
    pub out_of_orderness_ms: i64,
}

pub fn option_error(t: &Table, key: &str, message: String) -> SqlError {
    let span = t.options.get(key).map_or(t.span, |(_, s)| *s);
    SqlError::span(span, format!("table `{}`: '{key}': {message}", t.name))
}

pub fn required<'t>(t: &'t Table, key: &str) -> Result<&'t str, SqlError> {
    t.option(key).ok_or_else(|| {
        SqlError::span(
            t.span,
            format!("table `{}` needs the option '{key}'", t.name),
        )
    })
}

/// Options every connector takes: `connector` and `format`.
pub fn check_format(t: &Table) -> Result<(), SqlError> {
    match t.option("format") {
        Some("json") => Ok(()),
        Some(other) => Err(option_error(
            t,
            "format",
            format!("format '{other}' is not supported yet (supported: 'json')"),
        )),
        None => Err(SqlError::span(
            t.span,
            format!("table `{}` needs the option 'format' (= 'json')", t.name),
        )),
    }
}

pub fn refuse_unknown(t: &Table, known: &[&str], prefix: Option<&str>) -> Result<(), SqlError> {
    for key in t.options.keys() {
        let ok = known.contains(&key.as_str()) || prefix.is_some_and(|p| key.starts_with(p));
        if !ok {
            return Err(option_error(
                t,
                key,
                format!(
                    "not supported for connector '{}' (supported: {})",
                    t.option("connector").unwrap_or(""),
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The JSON format's options sluice takes: it never fails a job on a bad line (a malformed one
/// goes to the dead-letter output either way) and reads a missing field as NULL.
pub const JSON_OPTIONS: [&str; 2] = ["json.ignore-parse-errors", "json.fail-on-missing-field"];

/// The `avro-confluent` format's options.
pub const AVRO_OPTIONS: [&str; 2] = ["avro-confluent.url", "avro-confluent.subject"];

/// The `debezium-avro-confluent` format's options (Flink's names: the format's, then the same).
pub const DEBEZIUM_AVRO_OPTIONS: [&str; 2] = [
    "debezium-avro-confluent.url",
    "debezium-avro-confluent.subject",
];

/// The format options a table of its `format` may set, besides its connector's own: a format
/// a connector does not take is refused for its name, not for its options.
pub fn format_options(t: &Table) -> &'static [&'static str] {
    match t.option("format") {
        Some("csv") => &crate::connectors::csv::sql::OPTIONS,
        Some("avro-confluent") => &AVRO_OPTIONS,
        Some("debezium-avro-confluent") => &DEBEZIUM_AVRO_OPTIONS,
        _ => &JSON_OPTIONS,
    }
}

pub fn check_json_options(t: &Table) -> Result<(), SqlError> {
    match t.option("json.fail-on-missing-field") {
        None | Some("false") => {}
        Some(_) => {
            return Err(option_error(
                t,
                "json.fail-on-missing-field",
                "only 'false' is supported: a missing field reads as NULL".into(),
            ))
        }
    }
    match t.option("json.ignore-parse-errors") {
        None | Some("true") | Some("false") => Ok(()),
        Some(_) => Err(option_error(
            t,
            "json.ignore-parse-errors",
            "expected 'true' or 'false'".into(),
        )),
    }
}

/// The error for a `format` a connector does not take here (`supported`: what it takes).
pub fn unsupported_format(t: &Table, supported: &str) -> SqlError {
    match t.option("format") {
        Some(other) => option_error(
            t,
            "format",
            format!("format '{other}' is not supported here yet (supported: {supported})"),
        ),
        None => SqlError::span(
            t.span,
            format!("table `{}` needs the option 'format' ({supported})", t.name),
        ),
    }
}

/// A source table's `event_time` and `watermark`: its time attribute, its WATERMARK's bound,
/// the idle timeout (`SET 'table.exec.source.idle-timeout'`) and the alignment drift.
pub fn time_tables(
    t: &Table,
    time: Option<&EventTime>,
    idle_ms: Option<i64>,
) -> Result<(Option<EventTimeConfig>, WatermarkConfig), SqlError> {
    let Some(time) = time else {
        // No WATERMARK: the records have no event time, and there is no watermark to align.
        if let Some(name) = ALIGNMENT.iter().find(|o| t.option(o).is_some()) {
            return Err(option_error(
                t,
                name,
                "watermark alignment needs a WATERMARK on the table".into(),
            ));
        }
        let watermark = WatermarkConfig {
            idle_timeout: idle_ms.map_or_else(defaults::idle_timeout, duration),
            ..WatermarkConfig::default()
        };
        return Ok((None, watermark));
    };
    let event_time = EventTimeConfig {
        field: time.field.clone(),
        unit: if time.unit == "s" {
            TimeUnitConfig::S
        } else {
            TimeUnitConfig::Ms
        },
        ..EventTimeConfig::default()
    };
    let watermark = WatermarkConfig {
        max_out_of_orderness: duration(time.out_of_orderness_ms),
        idle_timeout: idle_ms.map_or_else(defaults::idle_timeout, duration),
        max_drift: max_drift(t)?.map(duration),
    };
    Ok((Some(event_time), watermark))
}

/// A non-negative number of milliseconds as a config duration.
pub fn duration(ms: i64) -> crate::config::Duration {
    crate::config::Duration::from_millis(ms).unwrap_or(crate::config::Duration::ZERO)
}

/// Flink's watermark alignment options (`scan.watermark.alignment.*`).
pub const ALIGNMENT: [&str; 3] = [
    "scan.watermark.alignment.group",
    "scan.watermark.alignment.max-drift",
    "scan.watermark.alignment.update-interval",
];

/// The `max_drift` (ms) of a table with Flink's watermark alignment: its partitions pause
/// while they run more than the drift ahead of the least watermark of the aligned tables, so a
/// join of a small file with a large one holds state for the drift, not for how far apart the
/// two files' event times come when read byte for byte. sluice aligns every table that sets a
/// drift as one group (the group's name is required, as Flink requires it, and not compared);
/// the update interval is Flink's polling period and changes nothing here.
pub fn max_drift(t: &Table) -> Result<Option<i64>, SqlError> {
    let (Some(drift), group) = (t.option(ALIGNMENT[1]), t.option(ALIGNMENT[0])) else {
        return match t.option(ALIGNMENT[0]) {
            Some(_) => Err(option_error(
                t,
                ALIGNMENT[0],
                "an alignment group needs 'scan.watermark.alignment.max-drift', as in Flink".into(),
            )),
            None => Ok(None),
        };
    };
    if group.is_none() {
        return Err(option_error(t, ALIGNMENT[1], "'scan.watermark.alignment.max-drift' needs 'scan.watermark.alignment.group', as in Flink".into()));
    }
    let ms = super::settings::flink_duration_ms(drift)
        .filter(|ms| *ms > 0)
        .ok_or_else(|| {
            option_error(
                t,
                ALIGNMENT[1],
                format!("'{drift}' is not a positive duration (e.g. '5 s', '1 min')"),
            )
        })?;
    Ok(Some(ms))
}

/// A table-shaped sink's `columns`: each physical column's type as the column model names it
/// (the PostgreSQL and Parquet sinks type their columns from the DDL, not from the first rows).
pub fn column_types(t: &Table) -> BTreeMap<String, String> {
    t.columns
        .iter()
        .filter(|c| c.computed.is_none())
        .filter_map(|c| {
            let ty = match &c.ty {
                SqlType::String => "text".to_string(),
                SqlType::Boolean => "boolean".into(),
                SqlType::Integer => "bigint".into(),
                SqlType::Float => "double".into(),
                SqlType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
                SqlType::Timestamp | SqlType::TimestampLtz => "timestamp".into(),
                SqlType::Other(o)
                    if o.starts_with("ROW") || o.starts_with("ARRAY") || o.starts_with("MAP") =>
                {
                    "json".into()
                }
                // DATE, TIME, BYTES and computed columns: as the first rows say.
                _ => return None,
            };
            Some((c.name.clone(), ty))
        })
        .collect()
}
