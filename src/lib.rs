//! sluice: a single-node, thread-per-core stream processor with Flink's event-time semantics.
//!
//! Data flows config -> plan -> runtime -> (sources -> operators -> sinks); imports follow it:
//! `config` parses TOML, `plan` validates it into an execution plan, `runtime` runs the plan on pinned
//! shard threads, `sources` read and parse input, `operators` keep keyed state, `sinks` write output,
//! `time` computes watermarks and `metrics` holds counters, `checkpoint` stores snapshots of state.
//! `cli` wires them together.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod api;
pub mod avro;
pub mod checkpoint;
pub mod cli;
pub mod config;
pub mod expr;
pub mod kafka_client;
pub mod loadgen;
pub mod metrics;
pub mod operators;
pub mod plan;
pub mod record;
pub mod runtime;
pub mod sinks;
pub mod sources;
pub mod sql;
pub mod state;
pub mod time;
pub mod top;
