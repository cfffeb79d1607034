//! Validation of a `postgres` sink: where it connects (the URL resolved from the file or the
//! environment and parsed as the client will parse it), the table and key it writes, and the
//! limits of its batches, queue and retries.

use std::sync::Arc;

use super::config::{PostgresSinkConfig, WindowTs};
use super::{check_key, OpenPostgres, Shared};
use crate::config::KeyPath;
use crate::connectors::check::Check;
use crate::connectors::sink::{
    known_types, ChangelogOption, Guarantee, OpenCx, OpenSink, Sink, SinkError,
};
use crate::connectors::SinkTable;
use crate::record::changelog::ChangelogEncoding;
use crate::record::columns::ColumnType;

/// `[sinks.NAME] type = "postgres"`, validated (see the module `postgres` for its guarantee).
#[derive(Debug, Clone, PartialEq)]
pub struct PostgresSinkPlan {
    /// Resolved from `url` or `url_env` at plan time.
    pub url: String,
    /// `name` or `schema.name`, as written.
    pub table: String,
    pub key: Vec<String>,
    pub create_table: bool,
    pub batch_rows: usize,
    pub max_delay: std::time::Duration,
    pub max_in_flight: usize,
    /// `window_start`/`window_end` as TIMESTAMPTZ when the sink creates the table.
    pub window_timestamptz: bool,
    pub columns: Vec<(String, ColumnType)>,
    pub retry_initial: std::time::Duration,
    pub retry_max: std::time::Duration,
    pub max_retry_time: std::time::Duration,
}

/// Upper bounds that keep a mistyped number from meaning "unbounded memory".
const MAX_BATCH_ROWS: usize = 1_000_000;
const MAX_IN_FLIGHT: usize = 64;

impl SinkTable for PostgresSinkConfig {
    fn inputs(&self) -> &[String] {
        &self.inputs
    }

    fn epoch_time_columns(&self) -> bool {
        true
    }

    fn flink_notes(&self) -> Vec<&'static str> {
        super::sql::FLINK_NOTES.to_vec()
    }

    /// With a key, every change is applied by it: an updating result is welcome.
    fn changelog(&self) -> ChangelogOption {
        if self.key.is_empty() {
            ChangelogOption::Append
        } else {
            ChangelogOption::Upsert
        }
    }

    fn validate(&self, cx: &mut Check<'_>) -> Arc<dyn Sink> {
        let (c, name) = (self, cx.name);
        let at = |k: &str| KeyPath::new(["sinks", name, k]);
        let url = postgres_url(cx, c);
        if c.table.trim().is_empty() {
            cx.err(at("table"), "the table name cannot be empty".into());
        } else if c.table.split('.').count() > 2 || c.table.split('.').any(|p| p.is_empty()) {
            cx.err(
                at("table"),
                format!(
                    "`{}` is not a table name; expected `name` or `schema.name`",
                    c.table
                ),
            );
        }
        for (i, k) in c.key.iter().enumerate() {
            if k.is_empty() || c.key[..i].contains(k) {
                cx.err(at("key"), format!("`{k}` is empty or named twice"));
            }
        }
        if !(1..=MAX_BATCH_ROWS).contains(&c.batch.rows) {
            cx.err(
                KeyPath::new(["sinks", name, "batch", "rows"]),
                format!("must be between 1 and {MAX_BATCH_ROWS}"),
            );
        }
        if !(1..=MAX_IN_FLIGHT).contains(&c.max_in_flight) {
            cx.err(
                at("max_in_flight"),
                format!("must be between 1 and {MAX_IN_FLIGHT}"),
            );
        }
        let retry = |k: &str| KeyPath::new(["sinks", name, "retry", k]);
        if c.retry.initial.as_millis() == 0 {
            cx.err(retry("initial"), "must be longer than 0 ms".into());
        }
        if c.retry.max < c.retry.initial {
            cx.err(retry("max"), "must be at least `initial`".into());
        }
        let mut columns = Vec::new();
        for (col, ty) in &c.columns {
            match ColumnType::parse(ty) {
                Ok(t) => columns.push((col.clone(), t)),
                Err(m) => cx.err(KeyPath::new(["sinks", name, "columns", col]), m),
            }
        }
        let ms =
            |d: crate::config::Duration| std::time::Duration::from_millis(d.as_millis() as u64);
        Arc::new(PostgresSinkPlan {
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
        })
    }
}

/// The connection URL from `url` or the variable `url_env` names, checked by the client's own
/// parser so a typo is refused before anything runs.
fn postgres_url(cx: &mut Check<'_>, c: &PostgresSinkConfig) -> String {
    let name = cx.name;
    let at = |k: &str| KeyPath::new(["sinks", name, k]);
    let (url, key) = match (&c.url, &c.url_env) {
        (Some(u), None) => (u.clone(), at("url")),
        (None, Some(var)) => match std::env::var(var) {
            Ok(u) if !u.trim().is_empty() => (u, at("url_env")),
            _ => {
                cx.err(
                        at("url_env"),
                        format!("the environment variable `{var}` is not set (it should hold a URL like postgresql://user@127.0.0.1:5432/db)"),
                    );
                return String::new();
            }
        },
        _ => {
            cx.err(
                    at("url"),
                    "give exactly one of `url` (e.g. \"postgresql://sluice@127.0.0.1:5432/sluice\") or `url_env` (a variable holding it)".into(),
                );
            return String::new();
        }
    };
    if let Err(e) = url.parse::<postgres::Config>() {
        // The message never repeats the URL: it may hold a password.
        cx.err(key, format!("not a PostgreSQL connection URL: {e}"));
    }
    url
}

impl Sink for PostgresSinkPlan {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn describe(&self) -> String {
        // Not the URL: it may hold a password.
        format!("postgres table {}", self.table)
    }

    fn guarantee(&self, checkpointed: bool) -> Guarantee {
        match (self.key.is_empty(), checkpointed) {
            (false, true) => Guarantee::Idempotent,
            (true, true) => Guarantee::AtLeastOnce,
            (_, false) => Guarantee::BestEffort,
        }
    }

    /// With a key, rows are upserted and deleted by it (`-U` and `-D` delete, `+I` and `+U`
    /// upsert; the last change of a key in a batch wins); without one, inserted.
    fn changelog(&self) -> ChangelogEncoding {
        if self.key.is_empty() {
            ChangelogEncoding::Append
        } else {
            ChangelogEncoding::ByKey
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    /// Checked to be reachable now, its key checked against the results it writes; rows the
    /// database refuses go to the dead letters.
    fn open(&self, cx: &OpenCx<'_>) -> Result<Arc<dyn OpenSink>, SinkError> {
        use ColumnType::Decimal;
        let fail = |m: String| SinkError::new(cx.name, m);
        check_key(cx.result_keys, &self.key).map_err(fail)?;
        let mut p = self.clone();
        p.columns = known_types(&p.columns, cx.known, Some(Decimal(None)), Decimal(None));
        let shared = Shared::open(cx.name, &p, cx.dead.cloned()).map_err(fail)?;
        Ok(Arc::new(OpenPostgres(shared)))
    }
}
