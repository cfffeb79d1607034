//! Keyed state: the per-shard tables that hold one accumulator set per key.
//!
//! State is owned by exactly one shard (the owner of the key's key group) and is never shared, so
//! nothing here is synchronised. See [`acc_table`] for why the pane table is hand-written.

pub mod acc_table;
pub mod index_table;
pub mod prefetch;
