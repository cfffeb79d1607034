//! sluice: a single-node, thread-per-core stream processor with Flink's event-time semantics.
//!
//! Data flows config -> plan -> runtime -> (sources -> operators -> sinks); imports follow it:
//! `config` parses TOML, `plan` validates it into an execution plan, `runtime` runs the plan on pinned
//! shard threads, `connectors` read input and write output (one folder per connector, behind the
//! source and sink traits), `operators` keep keyed state, `record` is what every room shares (the
//! event, the JSON scanner and binder), `time` computes watermarks and `metrics` holds counters,
//! `checkpoint` stores snapshots of state. `cli` wires them together.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod api;
pub mod checkpoint;
pub mod cli;
pub mod config;
pub mod connectors;
pub mod expr;
pub mod loadgen;
pub mod metrics;
pub mod operators;
pub mod plan;
pub mod record;
pub mod runtime;
pub mod sql;
pub mod state;
pub mod time;
pub mod top;
