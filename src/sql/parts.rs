//! The typed tables the compiler makes, one constructor per transform kind with the defaults a
//! hand-written table takes, so each part of a query is built as what it is (a filter, a select,
//! a window) rather than written out as text.

use crate::config::{
    Duration, FilterTransformConfig, HotKeysConfig, OrderedTable, SelectTransformConfig,
    SignedDuration, TransformConfig, WindowConfig, WindowTransformConfig,
};

/// A non-negative number of milliseconds as a duration (the compiler's intervals never are
/// negative; were one to be, it would be zero).
pub(super) fn ms(ms: i64) -> Duration {
    Duration::from_millis(ms).unwrap_or(Duration::ZERO)
}

/// A signed number of milliseconds (an interval join's bounds).
pub(super) fn signed_ms(ms: i64) -> SignedDuration {
    SignedDuration(ms)
}

/// Keeps the records of `input` that `condition` holds for.
pub(super) fn filter(input: &str, condition: String) -> TransformConfig {
    TransformConfig::Filter(FilterTransformConfig {
        inputs: vec![input.to_string()],
        condition,
    })
}

/// Each record of `input` as `{ name: value of expression, ... }`, in this order.
pub(super) fn select(input: &str, fields: Vec<(String, String)>) -> TransformConfig {
    TransformConfig::Select(SelectTransformConfig {
        inputs: vec![input.to_string()],
        fields: OrderedTable(fields),
    })
}

/// A window of `input` grouped by `group_by`.
pub(super) struct Window {
    pub input: String,
    pub group_by: Vec<String>,
    pub window: WindowConfig,
    pub allowed_lateness_ms: i64,
    pub late_events: Option<String>,
    pub aggregates: Vec<(String, String)>,
    pub hot_keys: HotKeysConfig,
}

impl Window {
    pub(super) fn table(self) -> TransformConfig {
        TransformConfig::Window(WindowTransformConfig {
            inputs: vec![self.input],
            group_by: self.group_by,
            window: self.window,
            allowed_lateness: ms(self.allowed_lateness_ms),
            late_events: self.late_events,
            aggregates: OrderedTable(self.aggregates),
            hot_keys: self.hot_keys,
        })
    }
}
