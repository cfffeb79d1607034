//! `[transforms.NAME] type = "filter"` and `type = "select"`: the tables steps are written as.

use serde::{Deserialize, Serialize};

use crate::config::OrderedTable;

/// `type = "filter"`: keeps the records for which `where` is true (null or false drops them).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FilterTransformConfig {
    pub inputs: Vec<String>,
    #[serde(rename = "where")]
    pub condition: String,
}

/// `type = "select"`: each record becomes `{ name: value of expression, ... }`, in the order
/// written; fields not listed are dropped, `new = "old"` renames.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SelectTransformConfig {
    pub inputs: Vec<String>,
    pub fields: OrderedTable,
}
