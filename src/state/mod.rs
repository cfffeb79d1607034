//! Keyed state's building blocks shared by operators: the key index table and cache prefetch
//! hints. (The window's accumulator table is the window's own: `operators::window::acc_table`.)
//!
//! State is owned by exactly one shard (the owner of the key's key group) and is never shared, so
//! nothing here is synchronised.

pub mod index_table;
pub mod prefetch;
