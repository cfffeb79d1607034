//! One shard's connection: the thread that turns the shard's result lines into upserts.
//!
//! It gathers lines into a batch until it has `batch.rows` rows or its first row has waited
//! `batch.max_delay`, drops all but the last row of each key within the batch (an upsert cannot
//! touch one row twice, and the last is what an uninterrupted stream of upserts leaves), and
//! writes the batch as one statement. A lost connection is retried with doubling backoff on a
//! fresh one, the same batch again (an upsert rewrites the same values), until `max_retry_time`
//! has passed since the first failure; then the sink fails and the job stops. A batch the server
//! refuses for its data (SQLSTATE classes 22 and 23) is split in halves until the rows it refuses
//! are single: those go to the dead letters with the server's message, the rest are written.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Instant;

use super::statements::{self as sql, TableColumn};
use super::{Msg, Shared};
use crate::connectors::sink::SinkWriter;
use crate::record::changelog::{split_kind, ChangelogEncoding};
use crate::record::columns::{self, Column};
use crate::record::event::RowKind;

/// Why a write did not happen.
enum Failure {
    /// The connection or the server is away: reconnect and write the same rows again.
    Retry(String),
    /// The server refuses these rows' values.
    Data(String),
    /// Nothing a retry would change (no such table, no unique index for the key, ...).
    Fatal(String),
}

fn classify(e: postgres::Error) -> Failure {
    let msg = match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    };
    match e.code().map(|c| c.code()) {
        Some(c) if c.starts_with("22") || c.starts_with("23") => Failure::Data(msg),
        // Connection, resources, operator intervention (shutdown), serialization, deadlock.
        Some(c)
            if ["08", "53", "57", "58", "40"]
                .iter()
                .any(|p| c.starts_with(p)) =>
        {
            Failure::Retry(msg)
        }
        Some(_) => Failure::Fatal(msg),
        None => Failure::Retry(msg),
    }
}

/// A result line and its fields, borrowed from the batch.
type Row<'a> = (&'a [u8], Vec<(String, columns::Value<'a>)>);

/// The table as this connection writes it: its columns, the prepared upsert and, for a keyed
/// sink, the prepared delete by key.
struct Table {
    columns: Vec<TableColumn>,
    upsert: postgres::Statement,
    delete: Option<(Vec<TableColumn>, postgres::Statement)>,
}

pub(super) struct Worker {
    shared: Arc<Shared>,
    client: Option<postgres::Client>,
    table: Option<Table>,
    /// Pending result lines, whole, and how many.
    pending: Vec<u8>,
    rows: usize,
    first_at: Option<Instant>,
    dead: Option<SinkWriter>,
    stop: Arc<AtomicBool>,
    /// Lines (by address) refused while writing the current batch: a retry of the whole batch
    /// after a split refuses them again, and they must reach the dead letters once.
    refused: hashbrown::HashSet<usize>,
}

impl Worker {
    pub(super) fn new(shared: Arc<Shared>, shard: usize, stop: Arc<AtomicBool>) -> Worker {
        let dead = shared.dead.as_ref().and_then(|d| {
            SinkWriter::open("dead_letter", &**d, shard, 0, ChangelogEncoding::Append).ok()
        });
        Worker {
            shared,
            client: None,
            table: None,
            pending: Vec::new(),
            rows: 0,
            first_at: None,
            dead,
            stop,
            refused: Default::default(),
        }
    }

    /// Runs until the shard hangs up; a fatal failure ends it with its message in `failure`.
    pub(super) fn run(mut self, rx: Receiver<Msg>, spare: std::sync::mpsc::SyncSender<Vec<u8>>) {
        loop {
            let msg = match self.first_at {
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(t) => rx.recv_timeout(self.shared.plan.max_delay.saturating_sub(t.elapsed())),
            };
            let res = match msg {
                Ok(Msg::Lines(mut buf)) => {
                    let r = self.take(&buf);
                    buf.clear();
                    let _ = spare.try_send(buf);
                    r
                }
                Ok(Msg::Sync(reply)) => {
                    let r = self.write_pending();
                    let _ = reply.send(r.clone());
                    r
                }
                Err(RecvTimeoutError::Timeout) => self.write_pending(),
                Err(RecvTimeoutError::Disconnected) => {
                    let _ = self.write_pending();
                    return;
                }
            };
            if let Err(why) = res {
                if let Ok(mut f) = self.shared.failure.lock() {
                    f.get_or_insert(why);
                }
                self.shared.failed.store(true, Ordering::Release);
                return;
            }
        }
    }

    /// Adds whole lines to the batch, writing it whenever it is full.
    fn take(&mut self, buf: &[u8]) -> Result<(), String> {
        for line in buf.split_inclusive(|&b| b == b'\n') {
            self.pending.extend_from_slice(line);
            self.rows += 1;
            self.first_at.get_or_insert_with(Instant::now);
            if self.rows >= self.shared.plan.batch_rows {
                self.write_pending()?;
            }
        }
        Ok(())
    }

    fn write_pending(&mut self) -> Result<(), String> {
        if self.rows == 0 {
            return Ok(());
        }
        let lines = std::mem::take(&mut self.pending);
        let keyed = !self.shared.plan.key.is_empty();
        let mut rows = Vec::with_capacity(self.rows);
        let mut deletes = Vec::new();
        for line in lines.split_inclusive(|&b| b == b'\n') {
            // A keyed sink takes a changelog: each line starts with its kind's code.
            let (kind, line) = if keyed {
                split_kind(line)
            } else {
                (RowKind::Insert, line)
            };
            match columns::fields(line) {
                Ok(f) => {
                    rows.push((line, f));
                    deletes.push(kind.is_retraction());
                }
                Err(e) => self.reject(line, &format!("not a JSON object: {e}")),
            }
        }
        self.refused.clear();
        let res = self.write_rows(rows, &deletes);
        self.pending = lines;
        self.pending.clear();
        self.rows = 0;
        self.first_at = None;
        if let Some(d) = self.dead.as_mut() {
            d.flush().map_err(|e| e.to_string())?;
        }
        res
    }

    /// Writes parsed rows (`deletes[i]`: row `i` takes its key's row out), retrying the
    /// connection, until they are in the table or failed.
    fn write_rows(&mut self, rows: Vec<Row<'_>>, deletes: &[bool]) -> Result<(), String> {
        let name = self.shared.name.clone();
        let shared = self.shared.clone();
        let plan = &shared.plan;
        let (mut backoff, mut since) = (plan.retry_initial, None::<Instant>);
        loop {
            match self.attempt(&rows, deletes) {
                Ok(()) => return Ok(()),
                Err(Failure::Fatal(m)) | Err(Failure::Data(m)) => return Err(m),
                Err(Failure::Retry(m)) => {
                    let c = &self.shared.counters;
                    c.errors.fetch_add(1, Ordering::Relaxed);
                    let first = *since.get_or_insert_with(Instant::now);
                    if first.elapsed() >= plan.max_retry_time || self.stop.load(Ordering::Relaxed) {
                        return Err(format!(
                            "PostgreSQL unreachable for {} s (max_retry_time): {m}; the job stops, its last checkpoint is intact",
                            first.elapsed().as_secs()
                        ));
                    }
                    tracing::warn!(sink = %name, error = %m, retry_in_ms = backoff.as_millis() as u64, "PostgreSQL write failed; retrying");
                    c.retries.fetch_add(1, Ordering::Relaxed);
                    self.client = None;
                    self.table = None;
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(plan.retry_max);
                }
            }
        }
    }

    /// One try at the whole batch: connect and learn the table if needed, then upsert (and
    /// delete) the last change of each key, splitting on data errors.
    fn attempt(&mut self, rows: &[Row<'_>], deletes: &[bool]) -> Result<(), Failure> {
        if rows.is_empty() {
            return Ok(());
        }
        if self.client.is_none() {
            let c = super::connect(&self.shared.plan).map_err(classify)?;
            self.client = Some(c);
        }
        if self.table.is_none() {
            let parsed: Vec<_> = rows.iter().map(|(_, f)| f.clone()).collect();
            self.table = Some(self.open_table(&parsed)?);
        }
        self.all_fields_have_columns(rows)?;
        let last = self.last_per_key(rows);
        let (gone, kept): (Vec<usize>, Vec<usize>) = last.into_iter().partition(|&i| deletes[i]);
        let kept: Vec<&Row<'_>> = kept.into_iter().map(|i| &rows[i]).collect();
        let gone: Vec<&Row<'_>> = gone.into_iter().map(|i| &rows[i]).collect();
        self.upsert_split(&kept, false)?;
        self.upsert_split(&gone, true)
    }

    /// Creates the table if asked (columns from these rows), reads its columns and prepares the
    /// upsert for the result's columns.
    fn open_table(&mut self, rows: &[Vec<(String, columns::Value<'_>)>]) -> Result<Table, Failure> {
        let plan = &self.shared.plan;
        let mut cols = columns::infer(rows, &plan.columns);
        if plan.window_timestamptz {
            for c in cols
                .iter_mut()
                .filter(|c| c.name == "window_start" || c.name == "window_end")
            {
                c.ty = columns::ColumnType::Timestamp;
            }
        }
        let client = self
            .client
            .as_mut()
            .ok_or_else(|| Failure::Retry("not connected".into()))?;
        if plan.create_table {
            // One statement list is one transaction: the advisory lock serialises the shards'
            // creators (IF NOT EXISTS alone does not), and is released with it.
            let create = format!(
                "SELECT pg_advisory_xact_lock(hashtext({})); {}",
                sql::literal(&sql::table_ident(&plan.table)),
                sql::create_table(&plan.table, &cols, &plan.key)
            );
            match client.batch_execute(&create) {
                Ok(()) => {}
                // Another creator (not this job's) won the race.
                Err(e) if matches!(e.code().map(|c| c.code()), Some("23505" | "42P07")) => {}
                Err(e) => return Err(classify(e)),
            }
        }
        let have: Vec<TableColumn> = client
            .query(sql::COLUMNS_QUERY, &[&sql::table_ident(&plan.table)])
            .map_err(classify)?
            .iter()
            .map(|r| TableColumn {
                name: r.get(0),
                base_type: r.get(1),
            })
            .collect();
        if have.is_empty() {
            return Err(Failure::Fatal(format!(
                "table `{}` does not exist (create it, or set create_table = true)",
                plan.table
            )));
        }
        let columns = written_columns(&cols, &have, &plan.key, &plan.table)?;
        let required: Vec<String> = client
            .query(sql::REQUIRED_QUERY, &[&sql::table_ident(&plan.table)])
            .map_err(classify)?
            .iter()
            .map(|r| r.get(0))
            .collect();
        if let Some(c) = required
            .iter()
            .find(|c| !columns.iter().any(|w| &w.name == *c))
        {
            return Err(Failure::Fatal(format!(
                "table `{}` requires column `{c}` (NOT NULL, no default), which the results do not have",
                plan.table
            )));
        }
        let upsert = client
            .prepare(&sql::upsert(&plan.table, &columns, &plan.key))
            .map_err(classify)?;
        let delete = if plan.key.is_empty() {
            None
        } else {
            let key: Vec<TableColumn> = (plan.key.iter())
                .filter_map(|k| columns.iter().find(|c| &c.name == k).cloned())
                .collect();
            let stmt = client
                .prepare(&sql::delete(&plan.table, &key))
                .map_err(classify)?;
            Some((key, stmt))
        };
        Ok(Table {
            columns,
            upsert,
            delete,
        })
    }

    /// A field the table was opened without (first seen after the first batch) would be dropped
    /// without a trace: it stops the sink instead, naming it.
    fn all_fields_have_columns(&self, rows: &[Row<'_>]) -> Result<(), Failure> {
        let Some(table) = &self.table else {
            return Ok(());
        };
        for (_, fields) in rows {
            if let Some((name, _)) = fields
                .iter()
                .find(|(n, _)| !table.columns.iter().any(|c| &c.name == n))
            {
                return Err(Failure::Fatal(format!(
                    "the result field `{name}` has no column in table `{}` (it first appeared after the table was opened: add the column, or select fewer fields)",
                    self.shared.plan.table
                )));
            }
        }
        Ok(())
    }

    /// The indexes of the last row of each key, in order; keyless sinks keep every row.
    fn last_per_key(&self, rows: &[Row<'_>]) -> Vec<usize> {
        let key = &self.shared.plan.key;
        if key.is_empty() {
            return (0..rows.len()).collect();
        }
        let mut last: hashbrown::HashMap<Vec<Option<std::borrow::Cow<'_, str>>>, usize> =
            Default::default();
        for (i, (_, f)) in rows.iter().enumerate() {
            let k = key
                .iter()
                .map(|k| f.iter().find(|(n, _)| n == k).and_then(|(_, v)| v.text()))
                .collect();
            last.insert(k, i);
        }
        let mut keep: Vec<usize> = last.into_values().collect();
        keep.sort_unstable();
        keep
    }

    /// Upserts `rows` (or, with `delete`, deletes their keys' rows), halving the batch around a
    /// row the server refuses.
    fn upsert_split(&mut self, rows: &[&Row<'_>], delete: bool) -> Result<(), Failure> {
        if rows.is_empty() {
            return Ok(());
        }
        match self.upsert(rows, delete) {
            Err(Failure::Data(m)) if rows.len() == 1 => {
                self.reject(rows[0].0, &m);
                Ok(())
            }
            Err(Failure::Data(_)) => {
                let (a, b) = rows.split_at(rows.len() / 2);
                self.upsert_split(a, delete)?;
                self.upsert_split(b, delete)
            }
            r => r,
        }
    }

    fn upsert(&mut self, rows: &[&Row<'_>], delete: bool) -> Result<(), Failure> {
        let started = Instant::now();
        let (Some(client), Some(table)) = (self.client.as_mut(), self.table.as_ref()) else {
            return Err(Failure::Retry("not connected".into()));
        };
        let (columns, statement) = match (&table.delete, delete) {
            (Some((key, stmt)), true) => (key, stmt),
            _ => (&table.columns, &table.upsert),
        };
        let arrays: Vec<Vec<Option<std::borrow::Cow<'_, str>>>> = columns
            .iter()
            .map(|c| {
                rows.iter()
                    .map(|(_, f)| {
                        f.iter()
                            .find(|(n, _)| *n == c.name)
                            .and_then(|(_, v)| v.text())
                    })
                    .collect()
            })
            .collect();
        let refs: Vec<Vec<Option<&str>>> = arrays
            .iter()
            .map(|a| a.iter().map(|v| v.as_deref()).collect())
            .collect();
        let params: Vec<&(dyn postgres::types::ToSql + Sync)> = refs
            .iter()
            .map(|a| a as &(dyn postgres::types::ToSql + Sync))
            .collect();
        client.execute(statement, &params).map_err(classify)?;
        let c = &self.shared.counters;
        c.rows_written
            .fetch_add(rows.len() as u64, Ordering::Relaxed);
        c.batches.fetch_add(1, Ordering::Relaxed);
        let ns = started.elapsed().as_nanos() as u64;
        c.batch_nanos.fetch_add(ns, Ordering::Relaxed);
        c.batch_nanos_max.fetch_max(ns, Ordering::Relaxed);
        Ok(())
    }

    /// A row the server refused: to the dead letters with its message, counted either way.
    fn reject(&mut self, line: &[u8], why: &str) {
        if !self.refused.insert(line.as_ptr() as usize) {
            return;
        }
        self.shared
            .counters
            .rejected
            .fetch_add(1, Ordering::Relaxed);
        let raw = String::from_utf8_lossy(line.strip_suffix(b"\n").unwrap_or(line));
        let v = serde_json::json!({ "reason": why, "sink": self.shared.name, "raw": raw });
        tracing::warn!(sink = %self.shared.name, reason = %why, "row refused by PostgreSQL");
        if let Some(d) = self.dead.as_mut() {
            let mut out = serde_json::to_vec(&v).unwrap_or_default();
            out.push(b'\n');
            // A dead-letter write failure surfaces at the shard's next flush of that output.
            let _ = d.line(&out);
        }
    }
}

/// The table's columns the result writes, in the table's order: every result field must have a
/// column, and every key field must be among them.
fn written_columns(
    result: &[Column],
    table: &[TableColumn],
    key: &[String],
    name: &str,
) -> Result<Vec<TableColumn>, Failure> {
    if let Some(c) = result
        .iter()
        .find(|c| !table.iter().any(|t| t.name == c.name))
    {
        return Err(Failure::Fatal(format!(
            "table `{name}` has no column `{}` for the result field of that name (add it, or select fewer fields)",
            c.name
        )));
    }
    if let Some(k) = key.iter().find(|k| !result.iter().any(|c| &c.name == *k)) {
        return Err(Failure::Fatal(format!(
            "the key field `{k}` is not in the results"
        )));
    }
    Ok(table
        .iter()
        .filter(|t| result.iter().any(|c| c.name == t.name))
        .cloned()
        .collect())
}
