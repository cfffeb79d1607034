//! Validation of a `postgres` sink: where it connects (the URL resolved from the file or the
//! environment and parsed as the client will parse it), the table and key it writes, and the
//! limits of its batches, queue and retries.

use super::Builder;
use crate::config::{KeyPath, PostgresSinkConfig, WindowTs};
use crate::plan::PostgresSinkPlan;
use crate::record::columns::ColumnType;

/// Upper bounds that keep a mistyped number from meaning "unbounded memory".
const MAX_BATCH_ROWS: usize = 1_000_000;
const MAX_IN_FLIGHT: usize = 64;

impl Builder<'_> {
    pub(super) fn postgres_sink(&mut self, name: &str, c: &PostgresSinkConfig) -> PostgresSinkPlan {
        let at = |k: &str| KeyPath::new(["sinks", name, k]);
        let url = self.postgres_url(name, c);
        if c.table.trim().is_empty() {
            self.err(at("table"), "the table name cannot be empty".into());
        } else if c.table.split('.').count() > 2 || c.table.split('.').any(|p| p.is_empty()) {
            self.err(
                at("table"),
                format!(
                    "`{}` is not a table name; expected `name` or `schema.name`",
                    c.table
                ),
            );
        }
        for (i, k) in c.key.iter().enumerate() {
            if k.is_empty() || c.key[..i].contains(k) {
                self.err(at("key"), format!("`{k}` is empty or named twice"));
            }
        }
        if !(1..=MAX_BATCH_ROWS).contains(&c.batch.rows) {
            self.err(
                KeyPath::new(["sinks", name, "batch", "rows"]),
                format!("must be between 1 and {MAX_BATCH_ROWS}"),
            );
        }
        if !(1..=MAX_IN_FLIGHT).contains(&c.max_in_flight) {
            self.err(
                at("max_in_flight"),
                format!("must be between 1 and {MAX_IN_FLIGHT}"),
            );
        }
        let retry = |k: &str| KeyPath::new(["sinks", name, "retry", k]);
        if c.retry.initial.as_millis() == 0 {
            self.err(retry("initial"), "must be longer than 0 ms".into());
        }
        if c.retry.max < c.retry.initial {
            self.err(retry("max"), "must be at least `initial`".into());
        }
        let mut columns = Vec::new();
        for (col, ty) in &c.columns {
            match ColumnType::parse(ty) {
                Ok(t) => columns.push((col.clone(), t)),
                Err(m) => self.err(KeyPath::new(["sinks", name, "columns", col]), m),
            }
        }
        let ms =
            |d: crate::config::Duration| std::time::Duration::from_millis(d.as_millis() as u64);
        PostgresSinkPlan {
            url,
            table: c.table.clone(),
            key: c.key.clone(),
            create_table: c.create_table,
            batch_rows: c.batch.rows,
            max_delay: ms(c.batch.max_delay),
            max_in_flight: c.max_in_flight,
            window_timestamptz: c.window_ts == WindowTs::Timestamptz,
            columns,
            retry_initial: ms(c.retry.initial),
            retry_max: ms(c.retry.max),
            max_retry_time: ms(c.retry.max_retry_time),
        }
    }

    /// The connection URL from `url` or the variable `url_env` names, checked by the client's own
    /// parser so a typo is refused before anything runs.
    fn postgres_url(&mut self, name: &str, c: &PostgresSinkConfig) -> String {
        let at = |k: &str| KeyPath::new(["sinks", name, k]);
        let (url, key) = match (&c.url, &c.url_env) {
            (Some(u), None) => (u.clone(), at("url")),
            (None, Some(var)) => match std::env::var(var) {
                Ok(u) if !u.trim().is_empty() => (u, at("url_env")),
                _ => {
                    self.err(
                        at("url_env"),
                        format!("the environment variable `{var}` is not set (it should hold a URL like postgresql://user@127.0.0.1:5432/db)"),
                    );
                    return String::new();
                }
            },
            _ => {
                self.err(
                    at("url"),
                    "give exactly one of `url` (e.g. \"postgresql://sluice@127.0.0.1:5432/sluice\") or `url_env` (a variable holding it)".into(),
                );
                return String::new();
            }
        };
        if let Err(e) = url.parse::<postgres::Config>() {
            // The message never repeats the URL: it may hold a password.
            self.err(key, format!("not a PostgreSQL connection URL: {e}"));
        }
        url
    }
}
