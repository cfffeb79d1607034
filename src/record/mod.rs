//! Records, the one room every other depends on: what an event is on the wire between shards
//! ([`event`]), how a field is addressed ([`path`]), how an NDJSON line is scanned ([`json`]) and
//! bound into events for the ports that read it ([`bind`]), how values print ([`text`]), and how a
//! result line splits into typed columns for table-shaped outputs ([`columns`]).
//!
//! It depends on nothing else in the crate: sources, operators, sinks, expressions, the plan and
//! metrics all build on it, never the other way round.

pub mod bind;
pub mod changelog;
pub mod columns;
pub mod debezium;
pub mod event;
pub mod json;
pub mod path;
pub mod text;

/// How the row of a deletion in an upsert changelog begins (a Kafka tombstone read with
/// `changelog = "upsert"` becomes one): a temporal join knows a deletion by it.
pub const TOMBSTONE: &[u8] = b"{\"_kafka\":{\"tombstone\":true";
