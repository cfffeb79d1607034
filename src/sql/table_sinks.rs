//! Flink's table-shaped sinks as sluice's: `'connector' = 'jdbc'` on a PostgreSQL URL as the
//! `postgres` sink, and `'connector' = 'filesystem'` with `'format' = 'parquet'` as the `parquet`
//! sink. Both take their column types from the table's DDL (pinned, not inferred from the first
//! rows) and their time columns as epoch milliseconds typed `timestamp`, not as Flink's JSON text.

use super::connectors::{option_error, refuse_unknown, required};
use super::ddl::Table;
use super::error::SqlError;
use super::expr::quote;
use super::settings::flink_duration_ms;
use super::types::SqlType;

/// Whether rows written into `t` carry time columns as epoch milliseconds (the sink types them
/// from the DDL) rather than as the `yyyy-MM-dd HH:mm:ss.SSS` text of Flink's JSON format.
pub fn takes_epoch_time(t: &Table) -> bool {
    match t.option("connector") {
        Some("jdbc") => true,
        Some("filesystem") => t.option("format") == Some("parquet"),
        _ => false,
    }
}

/// The sink's `columns = { ... }`: each physical column's type as the column model names it.
fn pinned_columns(t: &Table) -> String {
    let cols: Vec<String> = t
        .columns
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
            Some(format!("{} = {}", quote(&c.name), quote(&ty)))
        })
        .collect();
    format!("columns = {{ {} }}\n", cols.join(", "))
}

/// `'connector' = 'jdbc'`: Flink's JDBC sink on PostgreSQL. With a PRIMARY KEY it upserts
/// (`ON CONFLICT DO UPDATE`, Flink's upsert mode), without one it appends. As with Flink, the
/// table must exist.
pub fn jdbc_sink(t: &Table) -> Result<String, SqlError> {
    let known = [
        "connector",
        "url",
        "table-name",
        "driver",
        "username",
        "password",
        "sink.buffer-flush.max-rows",
        "sink.buffer-flush.interval",
    ];
    refuse_unknown(t, &known, None)?;
    if let Some(d) = t.option("driver") {
        if d != "org.postgresql.Driver" {
            return Err(option_error(
                t,
                "driver",
                format!("'{d}': sluice writes to PostgreSQL only (driver 'org.postgresql.Driver')"),
            ));
        }
    }
    let url = postgres_url(t)?;
    let mut out = String::from("type = \"postgres\"\n");
    out += &format!("url = {}\n", quote(&url));
    out += &format!("table = {}\n", quote(required(t, "table-name")?));
    let key: Vec<String> = t.primary_key.iter().map(|k| quote(k)).collect();
    out += &format!("key = [{}]\n", key.join(", "));
    out += &pinned_columns(t);
    let rows = match t.option("sink.buffer-flush.max-rows") {
        None => None,
        Some(n) => match n.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                return Err(option_error(
                    t,
                    "sink.buffer-flush.max-rows",
                    format!("'{n}': expected a number of rows above 0"),
                ))
            }
        },
    };
    let delay = match t.option("sink.buffer-flush.interval") {
        None => None,
        Some(d) => match flink_duration_ms(d) {
            Some(ms) if ms > 0 => Some(ms),
            _ => {
                return Err(option_error(
                    t,
                    "sink.buffer-flush.interval",
                    format!("'{d}': expected a duration above 0 such as '1s' or '200 ms'"),
                ))
            }
        },
    };
    let mut batch = Vec::new();
    if let Some(n) = rows {
        batch.push(format!("rows = {n}"));
    }
    if let Some(ms) = delay {
        batch.push(format!("max_delay = \"{ms}ms\""));
    }
    if !batch.is_empty() {
        out += &format!("batch = {{ {} }}\n", batch.join(", "));
    }
    Ok(out)
}

/// `jdbc:postgresql://host[:port]/db[?params]` with `username`/`password` as libpq's key=value
/// connection string (values quoted, so a password may hold any character).
fn postgres_url(t: &Table) -> Result<String, SqlError> {
    let url = required(t, "url")?;
    let bad = |why: &str| option_error(t, "url", format!("'{url}': {why}"));
    let Some(rest) = url.strip_prefix("jdbc:postgresql://") else {
        return Err(bad(
            "expected jdbc:postgresql://host[:port]/database (sluice writes to PostgreSQL only)",
        ));
    };
    let (rest, params) = rest.split_once('?').unwrap_or((rest, ""));
    let Some((host_port, db)) = rest.split_once('/') else {
        return Err(bad(
            "expected a database after the host: jdbc:postgresql://host[:port]/database",
        ));
    };
    let (host, port) = match host_port.rsplit_once(':') {
        Some((h, p)) if p.parse::<u16>().is_ok() => (h, p),
        Some(_) => return Err(bad("the port is not a number")),
        None => (host_port, "5432"),
    };
    if host.is_empty() || db.is_empty() {
        return Err(bad("expected jdbc:postgresql://host[:port]/database"));
    }
    let mut pairs = vec![
        ("host", host.to_string()),
        ("port", port.to_string()),
        ("dbname", db.to_string()),
    ];
    for p in params.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        let key = match k {
            "user" => "user",
            "password" => "password",
            "sslmode" => "sslmode",
            "connectTimeout" => "connect_timeout",
            "ApplicationName" => "application_name",
            other => return Err(bad(&format!("the URL parameter `{other}` is not supported (supported: user, password, sslmode, connectTimeout, ApplicationName)"))),
        };
        pairs.push((key, v.to_string()));
    }
    if let Some(u) = t.option("username") {
        pairs.push(("user", u.to_string()));
    }
    if let Some(p) = t.option("password") {
        pairs.push(("password", p.to_string()));
    }
    let text: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}='{}'", v.replace('\\', "\\\\").replace('\'', "\\'")))
        .collect();
    Ok(text.join(" "))
}

/// `'connector' = 'filesystem', 'format' = 'parquet'`: part files in the directory `path`,
/// finished at every checkpoint (exactly-once, as Flink's bulk formats roll on checkpoint).
pub fn parquet_sink(t: &Table) -> Result<String, SqlError> {
    refuse_unknown(t, &["connector", "format", "path"], None)?;
    let dir = required(t, "path")?;
    let mut out = String::from("type = \"parquet\"\n");
    out += &format!("path = {}\n", quote(dir));
    out += &pinned_columns(t);
    Ok(out)
}
