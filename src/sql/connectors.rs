//! A table's `WITH` options as a sluice source or sink: Flink's option names (`connector`,
//! `path`, `topic`, `properties.*`, `scan.startup.mode`, `sink.delivery-guarantee`, ...) to the
//! TOML keys of `[sources.NAME]` and `[sinks.NAME]`. Every option is either mapped or refused:
//! none is ignored silently.

use sqlparser::ast::Spanned;
use sqlparser::ast::{DateTimeField, Expr, Value};

use super::ddl::{Column, Table};
use super::error::SqlError;
use super::expr::{plain_args, quote};
use super::formats;
use super::types::SqlType;

/// Where a source table's event time comes from.
pub struct EventTime {
    /// The time attribute column (`rt` of `WATERMARK FOR rt`).
    pub column: String,
    /// The record field holding it, and its unit (`ms` or `s`).
    pub field: String,
    pub unit: &'static str,
    pub out_of_orderness_ms: i64,
}

pub(super) fn option_error(t: &Table, key: &str, message: String) -> SqlError {
    let span = t.options.get(key).map_or(t.span, |(_, s)| *s);
    SqlError::span(span, format!("table `{}`: '{key}': {message}", t.name))
}

pub(super) fn required<'t>(t: &'t Table, key: &str) -> Result<&'t str, SqlError> {
    t.option(key).ok_or_else(|| {
        SqlError::span(
            t.span,
            format!("table `{}` needs the option '{key}'", t.name),
        )
    })
}

/// Options every connector takes: `connector` and `format`.
pub(super) fn check_format(t: &Table) -> Result<(), SqlError> {
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

pub(super) fn refuse_unknown(
    t: &Table,
    known: &[&str],
    prefix: Option<&str>,
) -> Result<(), SqlError> {
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
pub(super) const JSON_OPTIONS: [&str; 2] =
    ["json.ignore-parse-errors", "json.fail-on-missing-field"];

pub(super) fn check_json_options(t: &Table) -> Result<(), SqlError> {
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

/// The `[sources.NAME]` table for a table read by a query.
pub fn source_toml(t: &Table, time: &EventTime, idle_ms: Option<i64>) -> Result<String, SqlError> {
    let idle = idle_ms.map_or(String::new(), |ms| format!(", idle_timeout = \"{ms}ms\""));
    let mut out = format!("[sources.{}]\n", quote(&t.name));
    let connector = required(t, "connector")?;
    if connector == "datagen" {
        return Ok(out + &datagen_source(t, time, &idle)?);
    }
    if connector == "nexmark" {
        return Ok(out + &super::nexmark::nexmark_source(t, time, &idle)?);
    }
    match connector {
        "filesystem" => {
            let known: Vec<&str> = ["connector", "format", "path"]
                .iter()
                .chain(&ALIGNMENT)
                .chain(formats::options(t))
                .copied()
                .collect();
            refuse_unknown(t, &known, None)?;
            out += "type = \"file\"\n";
            out += &format!("path = {}\n", quote(required(t, "path")?));
            out += &formats::toml(t, formats::Place::FileSource)?;
        }
        "kafka" => out += &super::kafka::kafka_source(t)?,
        // upsert-kafka names its key's and value's formats apart: JSON both.
        "upsert-kafka" => out += &(super::kafka::upsert_kafka_source(t)? + "format = \"json\"\n"),
        other => {
            return Err(option_error(t, "connector", format!("connector '{other}' is not supported as a source yet (supported: 'filesystem', 'kafka', 'upsert-kafka', 'datagen', 'nexmark')")));
        }
    }
    Ok(out + &time_toml(t, time, &idle)?)
}

/// A source's `event_time` and `watermark` lines: the table's time attribute, its WATERMARK's
/// bound, the idle timeout (`idle`: `, idle_timeout = ..` or empty) and the alignment drift.
pub(super) fn time_toml(t: &Table, time: &EventTime, idle: &str) -> Result<String, SqlError> {
    Ok(format!(
        "event_time = {{ field = {}, unit = \"{}\" }}\nwatermark = {{ max_out_of_orderness = \"{}ms\"{idle}{} }}\n\n",
        quote(&time.field),
        time.unit,
        time.out_of_orderness_ms,
        max_drift(t)?
    ))
}

/// Flink's watermark alignment options (`scan.watermark.alignment.*`).
pub(super) const ALIGNMENT: [&str; 3] = [
    "scan.watermark.alignment.group",
    "scan.watermark.alignment.max-drift",
    "scan.watermark.alignment.update-interval",
];

/// `, max_drift = "..ms"` for a table with Flink's watermark alignment: its partitions pause
/// while they run more than the drift ahead of the least watermark of the aligned tables, so a
/// join of a small file with a large one holds state for the drift, not for how far apart the
/// two files' event times come when read byte for byte. sluice aligns every table that sets a
/// drift as one group (the group's name is required, as Flink requires it, and not compared);
/// the update interval is Flink's polling period and changes nothing here.
pub(super) fn max_drift(t: &Table) -> Result<String, SqlError> {
    let (Some(drift), group) = (t.option(ALIGNMENT[1]), t.option(ALIGNMENT[0])) else {
        return match t.option(ALIGNMENT[0]) {
            Some(_) => Err(option_error(
                t,
                ALIGNMENT[0],
                "an alignment group needs 'scan.watermark.alignment.max-drift', as in Flink".into(),
            )),
            None => Ok(String::new()),
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
    Ok(format!(", max_drift = \"{ms}ms\""))
}

/// Flink's `datagen` connector mapped to the built-in generator, where the table is its clicks
/// (`ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT`, any of them, with the time attribute
/// on `ts` in milliseconds). The values are sluice's click model, not Flink's random fields, so
/// per-field options are refused.
fn datagen_source(t: &Table, time: &EventTime, idle: &str) -> Result<String, SqlError> {
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
    if time.field != "ts" || time.unit != "ms" {
        return Err(SqlError::span(t.span, format!("table `{}`: the generator's event time is `ts` in milliseconds: declare rt AS TO_TIMESTAMP_LTZ(ts, 3)", t.name)));
    }
    let mut out = String::from("type = \"generator\"\n");
    let number = |key: &str| -> Result<Option<u64>, SqlError> {
        t.option(key)
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| option_error(t, key, format!("'{v}' is not a count")))
            })
            .transpose()
    };
    if let Some(n) = number("number-of-rows")? {
        out += &format!("count = {n}\n");
    }
    if let Some(r) = number("rows-per-second")? {
        out += &format!("rate_limit = \"{r}/s\"\n");
    }
    out += &format!(
        "watermark = {{ max_out_of_orderness = \"{}ms\"{idle} }}\n\n",
        time.out_of_orderness_ms
    );
    Ok(out)
}

/// The `[sinks.NAME]` table for a table written by `INSERT INTO`, reading `inputs`.
pub fn sink_toml(t: &Table, inputs: &[String]) -> Result<String, SqlError> {
    let mut out = format!("[sinks.{}]\n", quote(&t.name));
    let list: Vec<String> = inputs.iter().map(|i| quote(i)).collect();
    let connector = required(t, "connector")?;
    match connector {
        "filesystem" if t.option("format") == Some("parquet") => {
            out += &super::table_sinks::parquet_sink(t)?
        }
        "jdbc" => out += &super::table_sinks::jdbc_sink(t)?,
        "filesystem" => {
            check_format(t)?;
            refuse_unknown(t, &["connector", "format", "path"], None)?;
            let dir = required(t, "path")?.trim_end_matches('/');
            out += "type = \"file\"\n";
            out += &format!("path = {}\n", quote(&format!("{dir}/part-0.json")));
        }
        "print" => {
            refuse_unknown(t, &["connector"], None)?;
            out += "type = \"stdout\"\n";
        }
        "kafka" => out += &super::kafka::kafka_sink(t)?,
        "upsert-kafka" => out += &super::kafka::upsert_kafka_sink(t)?,
        other => {
            return Err(option_error(t, "connector", format!("connector '{other}' is not supported as a sink yet (supported: 'filesystem' (json or parquet), 'kafka', 'upsert-kafka', 'jdbc' (PostgreSQL), 'print')")));
        }
    }
    out += &format!("inputs = [{}]\n\n", list.join(", "));
    Ok(out)
}

/// The event time of a source table: `WATERMARK FOR rt AS rt - INTERVAL 'n' UNIT` over a computed
/// column `rt AS TO_TIMESTAMP_LTZ(field, 3)` (milliseconds) or `(field, 0)` (seconds).
pub fn event_time(t: &Table) -> Result<EventTime, SqlError> {
    let Some(wm) = &t.watermark else {
        return Err(SqlError::span(t.span, format!("table `{}` is read by a query but has no WATERMARK: sluice works in event time; declare e.g. `rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND`", t.name)));
    };
    let Some(col) = t.columns.iter().find(|c| c.name == wm.column) else {
        return Err(SqlError::span(
            wm.span,
            format!(
                "WATERMARK FOR `{}`: the table has no such column",
                wm.column
            ),
        ));
    };
    let (field, unit) = time_source(t, col)?;
    let out_of_orderness_ms = watermark_delay(&wm.expr, &wm.column)?;
    Ok(EventTime {
        column: wm.column.clone(),
        field,
        unit,
        out_of_orderness_ms,
    })
}

fn time_source(t: &Table, col: &Column) -> Result<(String, &'static str), SqlError> {
    let refuse = || {
        SqlError::span(col.span, format!("time attribute `{}`: sluice reads event time from a number of epoch milliseconds or seconds; declare it as `{} AS TO_TIMESTAMP_LTZ(field, 3)` (or `, 0)` for seconds) over a BIGINT column", col.name, col.name))
    };
    let Some(Expr::Function(f)) = &col.computed else {
        return Err(refuse());
    };
    let e = col.computed.as_ref().ok_or_else(refuse)?;
    if !f.name.to_string().eq_ignore_ascii_case("TO_TIMESTAMP_LTZ") {
        return Err(refuse());
    }
    let args = plain_args(f, e)?;
    let (Some(Expr::Identifier(field)), precision) = (args.first().copied(), args.get(1).copied())
    else {
        return Err(refuse());
    };
    let unit = match precision {
        Some(Expr::Value(v)) if matches!(&v.value, Value::Number(n, _) if n == "3") => "ms",
        Some(Expr::Value(v)) if matches!(&v.value, Value::Number(n, _) if n == "0") => "s",
        None => "s",
        Some(other) => {
            return Err(SqlError::span(
                other.span(),
                "TO_TIMESTAMP_LTZ's precision must be 3 (milliseconds) or 0 (seconds)",
            ))
        }
    };
    match t.columns.iter().find(|c| c.name == field.value) {
        Some(c) if matches!(c.ty, SqlType::Integer) => Ok((field.value.clone(), unit)),
        Some(c) => Err(SqlError::span(
            c.span,
            format!("`{}` holds the event time, so it must be a BIGINT", c.name),
        )),
        None => Err(SqlError::span(
            field.span,
            format!("table `{}` has no column `{}`", t.name, field.value),
        )),
    }
}

/// `rt` -> 0, `rt - INTERVAL '5' SECOND` -> 5000.
fn watermark_delay(e: &Expr, column: &str) -> Result<i64, SqlError> {
    let refuse = || {
        SqlError::span(
            e.span(),
            format!("the watermark must be `{column}` or `{column} - INTERVAL '...' UNIT`"),
        )
    };
    match e {
        Expr::Identifier(id) if id.value == column => Ok(0),
        Expr::BinaryOp {
            left,
            op: sqlparser::ast::BinaryOperator::Minus,
            right,
        } => match left.as_ref() {
            Expr::Identifier(id) if id.value == column => interval_ms(right),
            _ => Err(refuse()),
        },
        _ => Err(refuse()),
    }
}

/// The longest interval taken: small enough that a bound built of several never overflows.
pub const MAX_INTERVAL_MS: i64 = 100_000 * 366 * 86_400_000;

/// `INTERVAL '5' SECOND` in milliseconds (whole milliseconds, not negative).
pub fn interval_ms(e: &Expr) -> Result<i64, SqlError> {
    let refuse = |why: &str| {
        SqlError::span(
            e.span(),
            format!("expected an interval such as INTERVAL '5' SECOND: {why}"),
        )
    };
    let Expr::Interval(i) = e else {
        return Err(refuse("not an interval"));
    };
    let text = match i.value.as_ref() {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::Number(s, _) => s.trim().to_string(),
            _ => return Err(refuse("the amount must be a number in quotes")),
        },
        _ => return Err(refuse("the amount must be a number in quotes")),
    };
    if i.last_field.is_some() {
        return Err(refuse("ranges such as DAY TO SECOND are not supported yet"));
    }
    let unit_ms: i64 = match i.leading_field {
        Some(DateTimeField::Millisecond | DateTimeField::Milliseconds) => 1,
        Some(DateTimeField::Second | DateTimeField::Seconds) => 1_000,
        Some(DateTimeField::Minute | DateTimeField::Minutes) => 60_000,
        Some(DateTimeField::Hour | DateTimeField::Hours) => 3_600_000,
        Some(DateTimeField::Day | DateTimeField::Days) => 86_400_000,
        _ => {
            return Err(refuse(
                "the unit must be MILLISECOND, SECOND, MINUTE, HOUR or DAY",
            ))
        }
    };
    let amount: rust_decimal::Decimal = text
        .parse()
        .map_err(|_| refuse("the amount is not a number"))?;
    let ms = amount
        .checked_mul(rust_decimal::Decimal::from(unit_ms))
        .ok_or_else(|| refuse("it is too long"))?;
    if ms.is_sign_negative() || ms.fract() != rust_decimal::Decimal::ZERO {
        return Err(refuse(
            "it must be a whole, non-negative number of milliseconds",
        ));
    }
    // Sums of a few intervals (bounds, offsets) must still fit an i64.
    i64::try_from(ms)
        .ok()
        .filter(|ms| *ms <= MAX_INTERVAL_MS)
        .ok_or_else(|| refuse("it is too long (at most 100 000 years)"))
}
