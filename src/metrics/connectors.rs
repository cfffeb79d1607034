//! What connectors hand the metrics: a table sink's counters, shared by its shards' connections,
//! and a log source's ends, asked of its system directly. Connectors implement or fill these;
//! metrics never names a connector.

/// What a table sink has done, for `/metrics` (shared by its shards' connections).
#[derive(Debug, Default)]
pub struct SinkCounters {
    pub name: String,
    pub rows_written: std::sync::atomic::AtomicU64,
    pub batches: std::sync::atomic::AtomicU64,
    /// Failed writes (each retried or fatal).
    pub errors: std::sync::atomic::AtomicU64,
    pub retries: std::sync::atomic::AtomicU64,
    /// Rows the database refused (to the dead letters).
    pub rejected: std::sync::atomic::AtomicU64,
    pub batch_nanos: std::sync::atomic::AtomicU64,
    pub batch_nanos_max: std::sync::atomic::AtomicU64,
}

impl SinkCounters {
    pub fn new(name: &str) -> SinkCounters {
        SinkCounters {
            name: name.into(),
            ..Default::default()
        }
    }
}

/// The ends of a source's logs, asked of their system directly (so the lag shows while every
/// shard is blocked and cannot publish).
pub trait LogEnds: Send + Sync {
    /// Where each log partition started this run, by global index.
    fn starts(&self) -> Vec<(u16, i64)>;
    /// (global index, end of its log) for every partition the system answered for.
    fn ends(&self) -> Vec<(u16, i64)>;
}
