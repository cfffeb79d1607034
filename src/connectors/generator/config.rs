//! `[sources.NAME] type = "generator"`: the built-in synthetic sources, as a user writes them.
//!
//! One table serves both models, told apart by `model`: `"clicks"` (the default, sluice's click
//! model) and `"nexmark"` (one of the Nexmark benchmark's three tables, `table = "person"`,
//! `"auction"` or `"bid"`). A key only one model reads is an `Option` here, `None` when the user
//! did not write it, so that the plan can refuse it for the other model by name and fill in its
//! default (from [`crate::config::defaults`]) for its own; keys whose default depends on the model
//! (`events_per_second`, `event_time`) are `Option`s for the same reason. Keys both models read
//! the same way carry their default here.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::config::{defaults, Duration, EventTimeConfig, WatermarkConfig};

/// Which synthetic data a generator source makes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GeneratorModel {
    /// sluice's click model (`ad_id`, `user_id`, `ts`, `bid`), shared with `sluice loadgen`.
    #[default]
    Clicks,
    /// The Nexmark auction model of `sluice loadgen nexmark`; see `table`.
    Nexmark,
}

/// One of Nexmark's three streams; each is one file of `sluice loadgen nexmark`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NexmarkTable {
    Person,
    Auction,
    Bid,
}

impl NexmarkTable {
    pub fn name(self) -> &'static str {
        match self {
            NexmarkTable::Person => "person",
            NexmarkTable::Auction => "auction",
            NexmarkTable::Bid => "bid",
        }
    }
}

/// The built-in synthetic source; every key but `table` (for `model = "nexmark"`) is optional.
/// See [`super::GeneratorPlan`] and [`super::NexmarkSourcePlan`].
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorSourceConfig {
    #[serde(default)]
    pub model: GeneratorModel,
    /// `model = "nexmark"` only (and required there): which of its streams this source is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<NexmarkTable>,
    /// At most this many records per second (`"50000/s"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<String>,
    #[serde(default = "defaults::seed")]
    pub seed: u64,
    /// Clicks: [`defaults::keys`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<u64>,
    /// Clicks: [`defaults::zipf_exponent`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zipf_exponent: Option<f64>,
    /// Clicks: [`defaults::celebrity_share`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub celebrity_share: Option<f64>,
    /// Clicks: [`defaults::users`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub users: Option<u64>,
    /// Events per second of event time. Clicks: [`defaults::events_per_second`]; Nexmark (its
    /// `firstEventRate`, over all three streams): [`defaults::nexmark_events_per_second`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events_per_second: Option<u64>,
    /// The event time of event 0, epoch ms.
    #[serde(default = "defaults::start_ms")]
    pub start_ms: i64,
    /// Clicks: [`defaults::generator_out_of_orderness`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_of_orderness: Option<Duration>,
    /// Clicks: [`defaults::late_fraction`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_fraction: Option<f64>,
    /// Clicks: [`defaults::late_by`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_by: Option<Duration>,
    /// Events the stream covers; absent: unbounded. Nexmark: events of all three streams, so
    /// the three tables of one `count` are the three files of `loadgen nexmark --events count`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Clicks: [`defaults::generator_event_time`] (`ts`); Nexmark:
    /// [`defaults::nexmark_event_time`] (`dateTime`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_time: Option<EventTimeConfig>,
    #[serde(default)]
    pub watermark: WatermarkConfig,
}

impl Default for GeneratorSourceConfig {
    /// `type = "generator"` with nothing else written.
    fn default() -> Self {
        GeneratorSourceConfig {
            model: GeneratorModel::default(),
            table: None,
            rate_limit: None,
            seed: defaults::seed(),
            keys: None,
            zipf_exponent: None,
            celebrity_share: None,
            users: None,
            events_per_second: None,
            start_ms: defaults::start_ms(),
            out_of_orderness: None,
            late_fraction: None,
            late_by: None,
            count: None,
            event_time: None,
            watermark: WatermarkConfig::default(),
        }
    }
}

impl GeneratorSourceConfig {
    /// The event time as written, else the model's default.
    pub fn event_time(&self) -> Cow<'_, EventTimeConfig> {
        match (&self.event_time, self.model) {
            (Some(et), _) => Cow::Borrowed(et),
            (None, GeneratorModel::Clicks) => Cow::Owned(defaults::generator_event_time()),
            (None, GeneratorModel::Nexmark) => Cow::Owned(defaults::nexmark_event_time()),
        }
    }

    /// The keys written that only the click model reads, in the order the struct lists them.
    pub fn click_keys_given(&self) -> Vec<&'static str> {
        [
            ("keys", self.keys.is_some()),
            ("zipf_exponent", self.zipf_exponent.is_some()),
            ("celebrity_share", self.celebrity_share.is_some()),
            ("users", self.users.is_some()),
            ("out_of_orderness", self.out_of_orderness.is_some()),
            ("late_fraction", self.late_fraction.is_some()),
            ("late_by", self.late_by.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, given)| given.then_some(k))
        .collect()
    }
}
