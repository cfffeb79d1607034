//! Every default a config key has, in one place, each saying where its value comes from.
//!
//! Serde refers to these by name (`#[serde(default = "defaults::shards")]`); nothing else in the
//! crate should hard-code a default a user could also write in a config file.

use super::duration::Duration;
use super::{EventTimeConfig, TimeUnitConfig};

/// One shard per core the process may run on (`std::thread::available_parallelism`, which honours
/// cgroup quotas and affinity masks); 1 where the platform cannot say.
pub fn shards() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// 720 = 2^4 * 3^2 * 5: divides evenly among 1-6, 8, 9, 10, 12, 15, 16 ... shards, so key groups
/// (and the state in them) spread evenly over most shard counts; fixed for the life of the state.
pub fn key_groups() -> u32 {
    720
}

/// Events per (sender, receiver) ring: 8192 x 128-byte events = 1 MiB, big enough to ride out a
/// slow receiver for a batch or two, small enough that all rings of a 2-shard job fit in L2/L3.
pub fn ring_capacity() -> usize {
    8192
}

/// 1 MiB per parse chunk: large enough that per-chunk bookkeeping (a chunk-end marker to every
/// shard) is noise, small enough that shards can share one file's chunks evenly.
pub fn chunk_bytes() -> usize {
    1 << 20
}

/// Thread-per-core wants each shard on its own core; the runtime falls back when the OS refuses.
pub fn pin_cores() -> bool {
    true
}

/// 1 MiB: far above any sane event, low enough that a file without newlines cannot eat memory.
pub fn max_line_bytes() -> usize {
    1 << 20
}

/// 5 s, as in the example and the usual Flink `forBoundedOutOfOrderness` choice.
pub fn max_out_of_orderness() -> Duration {
    Duration::from_secs(5)
}

/// 30 s without data marks a partition idle (the example value).
pub fn idle_timeout() -> Duration {
    Duration::from_secs(30)
}

/// No lateness unless asked for: a window is deleted as soon as it fires (Flink's default).
pub fn allowed_lateness() -> Duration {
    Duration::ZERO
}

/// Generator: fixed seed so two runs of the same config produce the same events.
pub fn seed() -> u64 {
    42
}

/// Generator: 100 000 distinct `ad_id`s, the key count of the benchmark.
pub fn keys() -> u64 {
    100_000
}

/// Generator: Zipf exponent 1.0 (classic Zipf: the k-th key is 1/k as frequent as the first).
pub fn zipf_exponent() -> f64 {
    1.0
}

/// Generator: no celebrity key unless asked for (the benchmark has none).
pub fn celebrity_share() -> f64 {
    0.0
}

/// Generator: one million distinct `user_id`s.
pub fn users() -> u64 {
    1_000_000
}

/// Generator: 100 000 events per second of event time, so a 1-minute window holds 6 million.
pub fn events_per_second() -> u64 {
    100_000
}

/// Generator: 2023-11-14T22:13:20Z, a round epoch-ms value in the recent past.
pub fn start_ms() -> i64 {
    1_700_000_000_000
}

/// Generator: 2 s of jitter, inside the default 5 s watermark bound so nothing is late by accident.
pub fn generator_out_of_orderness() -> Duration {
    Duration::from_secs(2)
}

/// Generator: no late events unless asked for.
pub fn late_fraction() -> f64 {
    0.0
}

/// Generator: a late event is 1 minute behind its slot, beyond the default 5 s bound.
pub fn late_by() -> Duration {
    Duration::from_secs(60)
}

/// Nexmark generator: 10 000 events per second of event time over all three streams, the
/// `firstEventRate` of nexmark-flink and of `sluice loadgen nexmark`.
pub fn nexmark_events_per_second() -> u64 {
    10_000
}

/// Nexmark records carry their time in `dateTime`, epoch milliseconds (as the files of
/// `sluice loadgen nexmark` do).
pub fn nexmark_event_time() -> EventTimeConfig {
    EventTimeConfig {
        field: "dateTime".to_string(),
        ..generator_event_time()
    }
}

/// Generator events carry `ts` in epoch milliseconds.
pub fn generator_event_time() -> EventTimeConfig {
    EventTimeConfig {
        max_future: max_future(),
        allow_negative: false,
        field: "ts".to_string(),
        unit: TimeUnitConfig::Ms,
        kafka_timestamp: false,
    }
}

/// A checkpoint every 10 s: replay after a crash is at most that much input, and writing state is a
/// small share of the time between checkpoints.
pub fn checkpoint_interval() -> Duration {
    Duration::from_secs(10)
}

/// Completed checkpoints kept: the newest plus two to fall back on if it turns out damaged.
pub fn checkpoint_retain() -> usize {
    3
}

/// Consecutive failed checkpoints tolerated before the job stops: none, as Flink's default
/// (`execution.checkpointing.tolerable-failed-checkpoints` = 0). A failed checkpoint loses nothing
/// either way: its output is committed with the next one that completes.
pub fn tolerable_failures() -> u32 {
    0
}

/// An hour of clock skew is tolerated; more is a producer's clock gone wrong.
pub fn max_future() -> Duration {
    Duration::from_secs(3600)
}

/// A drain finishes the chunks in flight, writes the final checkpoint and commits: seconds, not
/// minutes; a minute means something is stuck, and the last complete checkpoint is still there.
pub fn drain_timeout() -> Duration {
    Duration::from_secs(60)
}

/// The metrics endpoint listens on loopback, on Prometheus' port range.
pub fn api_address() -> String {
    "127.0.0.1:9464".into()
}

/// The endpoint has no authentication: serving other hosts is refused unless the config says so.
pub fn api_allow_remote() -> bool {
    false
}

/// 16 connections at once (a thread each): a scraper, probes and `sluice top` use one or two for
/// milliseconds, so this leaves room for a dozen stalled clients before the limit shuts any.
pub fn api_max_connections() -> usize {
    16
}

/// A client sends its few hundred bytes of request at once; 2 s (the old per-read timeout, now a
/// deadline for the whole head) is a stalled or trickling client, not a slow network.
pub fn api_read_timeout() -> Duration {
    Duration::from_secs(2)
}

/// 5 s for a whole response: a `/metrics` body of megabytes on any working link, half of
/// Prometheus' default scrape timeout, and the most a client that stopped reading holds a slot.
pub fn api_write_timeout() -> Duration {
    Duration::from_secs(5)
}

/// A key with share `t` of the events gives its owner `t * shards` times a shard's average load on
/// top of its own: it is hot once that is a quarter, `t >= 1 / (4 * shards)`, and at 5% whatever
/// the shard count (1.6% on 16 shards; 5% on 2 to 5), well above any key of a uniform spread over
/// thousands of keys.
pub fn hot_key_threshold(shards: usize) -> f64 {
    (0.25 / shards.max(1) as f64).min(0.05)
}

/// 16384 held events (2 MiB of 128-byte events) per shard: more than a 1 MiB chunk's worth of
/// lines, so phase one hands on at chunk ends, not mid-chunk.
pub const fn hot_key_max_buffered() -> usize {
    16384
}

/// 5000 rows per upsert: large enough that a round trip is noise per row, small enough that a
/// batch's arrays stay well under a megabyte for typical results.
pub fn pg_batch_rows() -> usize {
    5000
}

/// 200 ms: a quiet stream's results reach the table within a fifth of a second.
pub fn pg_batch_max_delay() -> Duration {
    Duration::from_millis(200).unwrap_or(Duration::ZERO)
}

/// Two batches queued per shard: one being written while the next fills.
pub fn pg_max_in_flight() -> usize {
    2
}

/// First reconnect after 100 ms, doubling.
pub fn retry_initial() -> Duration {
    Duration::from_millis(100).unwrap_or(Duration::ZERO)
}

/// At most 5 s between reconnect attempts.
pub fn retry_max() -> Duration {
    Duration::from_secs(5)
}

/// A minute without the database stops the job (its last checkpoint intact): long enough for a
/// failover or restart, short enough that an operator hears of an outage.
pub fn max_retry_time() -> Duration {
    Duration::from_secs(60)
}

/// Rows per Parquet part file before the next one starts.
pub fn parquet_roll_rows() -> u64 {
    1_000_000
}
