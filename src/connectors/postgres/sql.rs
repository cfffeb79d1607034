//! Flink's `jdbc` connector on a PostgreSQL URL as the `postgres` sink. It takes its column
//! types from the table's DDL (pinned, not inferred from the first rows) and its time columns as
//! epoch milliseconds typed `timestamp`, not as Flink's JSON text.

use super::config::{BatchConfig, PostgresSinkConfig};
use crate::connectors::SinkConfig;
use crate::sql::ddl::Table;
use crate::sql::options::{column_types, duration, option_error, refuse_unknown, required};
use crate::sql::settings::flink_duration_ms;
use crate::sql::SqlError;

/// `'connector' = 'jdbc'`: Flink's JDBC sink on PostgreSQL. With a PRIMARY KEY it upserts
/// (`ON CONFLICT DO UPDATE`, Flink's upsert mode), without one it appends. As with Flink, the
/// table must exist.
pub fn sink(t: &Table) -> Result<SinkConfig, SqlError> {
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
    let table = required(t, "table-name")?.to_string();
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
    let mut batch = BatchConfig::default();
    if let Some(n) = rows {
        batch.rows = n;
    }
    if let Some(ms) = delay {
        batch.max_delay = duration(ms);
    }
    Ok(SinkConfig::Postgres(PostgresSinkConfig {
        url: Some(url),
        table,
        key: t.primary_key.clone(),
        columns: column_types(t),
        batch,
        ..PostgresSinkConfig::default()
    }))
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

/// What `sluice export flink` notes for a `jdbc` table.
pub const FLINK_NOTES: [&str; 2] = [
    "`jdbc` tables need `flink-connector-jdbc` and the PostgreSQL driver on the cluster's class path.",
    "A `jdbc` table must exist in the database (in sluice as in Flink); Flink's JDBC sink is at-least-once, upserts with a PRIMARY KEY making it end as sluice's does.",
];
