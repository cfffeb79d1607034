//! Shared harness for the end-to-end tests: a deliberately naive reference model of the window
//! operator (a sequential replay of the input files), a seeded input generator, and helpers that
//! write a config, run the real `sluice` binary and compare what it wrote with the model.
//! It must never call into the engine's library: the model is the independent check.
//!
//! Engine-contract assumptions made here (for the lead to reconcile with the engine):
//! - A1 `sluice run --config F [--stats S]` exits 0 once bounded inputs end; `validate` exits 0 on a
//!   good config; errors exit non-zero and print `file:line:col` plus the key/name on stderr.
//! - A2 `[runtime]` accepts `shards`, `key_groups`, `ring_capacity`, `chunk_bytes`. Durations are
//!   written with the largest exact unit ("1m", "5s", "3001ms"); a zero lateness is written "0s".
//! - A3 Watermark before an event = max ts of the partition's earlier valid events minus
//!   max_out_of_orderness (no extra -1): an event at ts == wm == window_end-1 is late.
//! - A4 A window [s,e) fires when wm >= e-1 (checked before each event and at end of input), is
//!   dropped when wm >= e-1+lateness; an event is late for a window when wm >= e-1+lateness and goes
//!   verbatim (input bytes, no newline) to `late_events` only when it is late for ALL its windows.
//!   An accepted event for a window with e-1 <= wm (re-)fires it at once, even if that window had
//!   no earlier data.
//! - A5 Sessions: a new event is [ts, ts+gap); it merges first and is late when the MERGED window's
//!   end-1+lateness <= wm (Flink's MergingWindowSet); sessions merge
//!   when they intersect inclusively (Flink's TimeWindow.intersects). Tests never put two events of
//!   a key exactly `gap` apart, so an exclusive rule passes too. A session is dropped from state when
//!   wm >= end-1+lateness. Tests avoid late merges that move a fired session's window_start.
//! - A6 Several files: the operator's watermark is monotone: max(previous, min over partitions
//!   that have seen an event and have not finished of (max - ooo)); it stays put when none is
//!   active. The model reads whole files one after another (sorted by path), so multi-file tests
//!   only assert what the engine's round-robin chunk interleaving cannot change.
//! - A7 Output line keys are exactly group_by + window_start + window_end + aggregate names;
//!   group-by values are the input JSON values; count/sum/min/max/count_distinct print integers
//!   (integer inputs), avg any JSON number. Sum/min/max/avg over a window whose field is always
//!   null/missing are not checked.
//! - A8 Lines of one (group-by, window_start) appear in the output file in emission order (the last
//!   one is the current value), whatever the shard count; lines of different keys may interleave.
//! - A9 Malformed = not a JSON object, ts missing or not an integer, or a sum/min/max/avg field
//!   present and neither a number nor null. Such a line changes nothing (not even the watermark)
//!   and goes to the dead-letter file as {reason, source, partition (path ending in the file
//!   name), offset (byte offset of its first byte), raw (the line)}.
//! - A10 A sink or dead-letter file that received nothing may be absent (read as empty).
//! - A11 `--stats` JSON has numbers `events_per_second`, `latency_p50_us`, `latency_p99_us`,
//!   `latency_p999_us`.
//!
//! Layout: `http` (a client for the `[api]` endpoint), `model` (the job description and the reference model), `input` (the seeded generator
//! and file-content helpers), `run` (running the binary, writing configs, comparing its output
//! with the model). Everything public is re-exported here, so test files write `common::x` or
//! `use common::*`; except `flow_model` (the ad-spend dataflow's reference model), used as
//! `common::flow_model::x` (with `flow_job`, the same pipeline as a job for fault tests), since its names (`Click`, `dedupe`) would clash with the others; and
//! `graph_model` (a reference engine for dataflow graphs of every operator kind) with `graph_run`
//! (running such a graph through the binary and comparing) and `graph_data` (their input files),
//! used the same way; `nexmark_model` (the Nexmark queries' reference model), used as
//! `common::nexmark_model::x`; and `pg` (a local PostgreSQL server for the postgres sink's tests).
#![allow(dead_code)]

pub mod changelog;
pub mod duckdb;
pub mod flow_job;
pub mod flow_model;
pub mod graph_data;
pub mod graph_model;
pub mod graph_run;
mod http;
mod input;
pub mod kafka;
mod model;
pub mod nexmark_model;
pub mod pg;
pub mod registry;
mod run;
pub mod sql;

// Each test binary uses a subset, so a glob may go unused in one of them (as dead_code above).
#[allow(unused_imports)]
pub use http::*;
#[allow(unused_imports)]
pub use input::*;
#[allow(unused_imports)]
pub use model::*;
#[allow(unused_imports)]
pub use run::*;

pub const BIN: &str = env!("CARGO_BIN_EXE_sluice");
/// A minute-aligned epoch-ms base near 2023, so windows start on it.
pub const BASE: i64 = 1_699_999_980_000;
