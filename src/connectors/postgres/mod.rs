//! The `postgres` sink: result rows upserted into a table, one connection per shard.
//!
//! A shard hands its buffered result lines to its connection's thread (`worker`) through a
//! bounded queue of `max_in_flight` buffers; when the database is slow the queue fills, the
//! shard blocks on it, stops taking from its rings and reading its source (a Kafka source pauses,
//! a file stops advancing), so memory stays bounded and lag stays in the source. At a checkpoint
//! barrier and at the end of the run the shard waits until every row it handed over is in the
//! table.
//!
//! Guarantee: with `key` set and `[checkpoint]`, the table ends exactly as an uninterrupted run
//! leaves it after any crash: results replayed after a restore rewrite the same values (and a
//! re-fire overwrites its window's row), so readers may briefly see an earlier value that the
//! replay then rewrites. Without `key`, rows are inserted: at-least-once, a replay inserts again.

pub mod config;
pub mod plan;
pub mod sql;
mod statements;
mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub use crate::metrics::SinkCounters;
pub use config::PostgresSinkConfig;
pub use plan::PostgresSinkPlan;

use crate::connectors::sink::{OpenSink, SinkError, SinkPart};

/// What every connection of one sink shares.
#[derive(Debug)]
pub struct Shared {
    pub name: String,
    pub plan: PostgresSinkPlan,
    pub dead: Option<Arc<dyn OpenSink>>,
    pub counters: Arc<SinkCounters>,
    /// The first fatal failure of any connection.
    failure: Mutex<Option<String>>,
    /// Set once `failure` is: the shard's every loop turn reads this, not the lock.
    failed: AtomicBool,
}

impl Shared {
    /// Checks that the database answers and, unless the sink creates it, that the table exists:
    /// a wrong URL or table fails the run before anything is read.
    pub fn open(
        name: &str,
        plan: &PostgresSinkPlan,
        dead: Option<Arc<dyn OpenSink>>,
    ) -> Result<Arc<Shared>, String> {
        let mut c = connect(plan).map_err(|e| format!("cannot connect to PostgreSQL: {e}"))?;
        if !plan.create_table {
            let found = c
                .query_one(
                    "SELECT to_regclass($1) IS NOT NULL",
                    &[&statements::table_ident(&plan.table)],
                )
                .map_err(|e| format!("reading the catalog: {e}"))?;
            if !found.get::<_, bool>(0) {
                return Err(format!(
                    "table `{}` does not exist (create it, or set create_table = true)",
                    plan.table
                ));
            }
        }
        Ok(Arc::new(Shared {
            name: name.into(),
            plan: plan.clone(),
            dead,
            counters: Arc::new(SinkCounters::new(name)),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
        }))
    }

    fn failure(&self) -> String {
        self.failure
            .lock()
            .ok()
            .and_then(|f| f.clone())
            .unwrap_or_else(|| "its connection thread ended".into())
    }
}

/// A connection with bounded waits: a server that stops answering (a half-open connection, a
/// black-holed host) fails within seconds and is retried, instead of blocking the shard forever.
pub(crate) fn connect(plan: &PostgresSinkPlan) -> Result<postgres::Client, postgres::Error> {
    let mut config: postgres::Config = match plan.url.parse() {
        Ok(c) => c,
        // The plan checked the URL; connecting reports the same error again if it changed.
        Err(_) => return postgres::Client::connect(&plan.url, postgres::NoTls),
    };
    let wait = plan.retry_max.max(std::time::Duration::from_secs(10));
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(wait);
    }
    config.keepalives(true);
    config.keepalives_idle(std::time::Duration::from_secs(10));
    config.tcp_user_timeout(wait * 3);
    config.connect(postgres::NoTls)
}

/// Refuses a `key` that would let two shards write one row (it must hold each window input's
/// group-by fields and `window_start`, `result_keys`): the table would then depend on thread
/// timing, not on the input, and the sink's guarantee would not hold.
pub fn check_key(result_keys: &[Vec<String>], key: &[String]) -> Result<(), String> {
    for want in result_keys {
        for f in want {
            if !key.is_empty() && !key.contains(f) {
                return Err(format!(
                    "`key` must include `{f}`: rows of different {} would otherwise overwrite each other",
                    if f == "window_start" { "windows" } else { "groups" }
                ));
            }
        }
    }
    Ok(())
}

enum Msg {
    Lines(Vec<u8>),
    /// Reply once everything before is in the table.
    Sync(SyncSender<Result<(), String>>),
}

/// A shard's end of its connection.
#[derive(Debug)]
pub struct PgOut {
    shared: Arc<Shared>,
    tx: Option<SyncSender<Msg>>,
    spare: Receiver<Vec<u8>>,
    last_flush: Instant,
    /// Tells this connection's thread to stop retrying once the shard is gone.
    stop: Arc<AtomicBool>,
}

impl PgOut {
    pub fn new(shared: &Arc<Shared>, shard: usize) -> Result<PgOut, String> {
        let (tx, rx) = sync_channel(shared.plan.max_in_flight);
        let (spare_tx, spare) = sync_channel(shared.plan.max_in_flight + 1);
        let stop = Arc::new(AtomicBool::new(false));
        let w = worker::Worker::new(shared.clone(), shard, stop.clone());
        std::thread::Builder::new()
            .name(format!("pg-{}-{shard}", shared.name))
            .spawn(move || w.run(rx, spare_tx))
            .map_err(|e| format!("starting its connection thread: {e}"))?;
        Ok(PgOut {
            shared: shared.clone(),
            tx: Some(tx),
            spare,
            last_flush: Instant::now(),
            stop,
        })
    }

    /// Hands `buf`'s lines over (blocking while `max_in_flight` buffers wait: backpressure) and
    /// leaves `buf` empty; when `durable`, waits until they are in the table.
    pub fn write(&mut self, buf: &mut Vec<u8>, durable: bool) -> Result<(), String> {
        self.last_flush = Instant::now();
        let tx = self.tx.as_ref().ok_or_else(|| self.shared.failure())?;
        if !buf.is_empty() {
            let next = self
                .spare
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(buf.capacity()));
            let full = std::mem::replace(buf, next);
            tx.send(Msg::Lines(full))
                .map_err(|_| self.shared.failure())?;
        }
        if durable {
            let (reply, done) = sync_channel(1);
            tx.send(Msg::Sync(reply))
                .map_err(|_| self.shared.failure())?;
            done.recv().map_err(|_| self.shared.failure())??;
        }
        Ok(())
    }

    /// Whether lines buffered since the last hand-over have waited `max_delay`.
    pub fn due(&self, now: Instant) -> bool {
        now.duration_since(self.last_flush) >= self.shared.plan.max_delay
    }

    /// A connection's fatal failure, seen without writing.
    pub fn failed(&self) -> Option<String> {
        if !self.shared.failed.load(Ordering::Acquire) {
            return None;
        }
        self.shared.failure.lock().ok().and_then(|f| f.clone())
    }
}

impl Drop for PgOut {
    fn drop(&mut self) {
        // Hanging up lets the thread write what it holds and end; it is not waited for, so a run
        // that fails is not held up by a connection still retrying.
        self.stop.store(true, Ordering::Relaxed);
        self.tx = None;
    }
}

/// The open sink: every shard's part is a connection of its own, started when the part is made;
/// one that cannot start fails the shard's first write.
#[derive(Debug)]
pub struct OpenPostgres(pub Arc<Shared>);

impl OpenSink for OpenPostgres {
    fn part(&self, shard: usize, _first_id: u64) -> Result<Box<dyn SinkPart>, SinkError> {
        Ok(Box::new(PgPart(PgOut::new(&self.0, shard))))
    }

    fn counters(&self) -> Option<Arc<SinkCounters>> {
        Some(self.0.counters.clone())
    }
}

/// A shard's connection, or why it could not start (reported at its first write or tick).
#[derive(Debug)]
struct PgPart(Result<PgOut, String>);

impl SinkPart for PgPart {
    fn write(&mut self, buf: &mut Vec<u8>, durable: bool) -> Result<(), String> {
        match &mut self.0 {
            Ok(p) => p.write(buf, durable),
            Err(m) => Err(m.clone()),
        }
    }

    fn due(&self, now: Instant) -> bool {
        matches!(&self.0, Ok(p) if p.due(now))
    }

    fn failed(&self) -> Option<String> {
        match &self.0 {
            Ok(p) => p.failed(),
            Err(m) => Some(m.clone()),
        }
    }
}
