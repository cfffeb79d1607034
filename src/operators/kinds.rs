//! The registry of operator kinds, the one place that lists them (one line each): the
//! `[transforms.NAME]` tables (`type = "window"`, ...) a config may hold and the node kinds of the
//! plan they validate into. Each kind's folder implements [`TransformTable`] for its table
//! (its inputs, its late side output, its validation into the graph) and [`NodeSpec`] for its
//! node (its state signature, how `explain` shows it, and the operator a shard runs for it).

use serde::{Deserialize, Serialize};

use super::{
    dedupe, group_agg, interval_join, over_agg, rank, regular_join, steps, temporal_join, top_n,
    window,
};
use super::{BuildCtx, Combine, Operator};
use crate::plan::build::{graph::Graph, Builder};
use crate::plan::HotKeysPlan;

/// A `[transforms.NAME]` table: what the graph needs of it before and while it is validated.
pub(crate) trait TransformTable {
    /// Every stream name it reads, with the key that names it: (`inputs`, Some(2), name) for
    /// `inputs[2]`, (`left`, None, name) for `left`.
    fn input_names(&self) -> Vec<(&'static str, Option<usize>, &str)>;
    /// Hands each stream name it reads to `one`, which may change it.
    fn each_input(&mut self, one: &mut dyn FnMut(&mut String));
    /// The name of its late side output, if it has one.
    fn late_events(&self) -> Option<&str> {
        None
    }
    /// Its `inputs` list; empty when its inputs are named one by one (`left`, `table`, ...) and
    /// checked by its own validation.
    fn inputs(&self) -> &[String] {
        &[]
    }
    /// Validates the table named `name` into the graph (its node and ports, or its step);
    /// problems go to `b`.
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>);
}

/// The [`TransformTable`] methods over a table's inputs, as every kind writes them: with no
/// argument, over its `inputs` list (`input_names`, `each_input`, `inputs`); with field names
/// (`left, right`), over those, in order (`input_names`, `each_input`).
macro_rules! table_inputs {
    () => {
        fn input_names(&self) -> Vec<(&'static str, Option<usize>, &str)> {
            $crate::operators::listed(&self.inputs)
        }
        fn each_input(&mut self, one: &mut dyn FnMut(&mut String)) {
            self.inputs.iter_mut().for_each(one);
        }
        fn inputs(&self) -> &[String] {
            &self.inputs
        }
    };
    ($($side:ident),+) => {
        fn input_names(&self) -> Vec<(&'static str, Option<usize>, &str)> {
            vec![$((stringify!($side), None, self.$side.as_str())),+]
        }
        fn each_input(&mut self, one: &mut dyn FnMut(&mut String)) {
            $(one(&mut self.$side);)+
        }
    };
}
pub(crate) use table_inputs;

/// (`inputs`, Some(i), name) for each name of an `inputs` list.
pub(crate) fn listed(inputs: &[String]) -> Vec<(&'static str, Option<usize>, &str)> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, n)| ("inputs", Some(i), n.as_str()))
        .collect()
}

/// A node of the plan: what the runtime and `explain` need of it.
pub trait NodeSpec {
    /// What the node's state layout depends on. Two configs whose nodes have the same name and
    /// signature can share state (lateness, inputs and output names may differ); anything else
    /// cannot, and a restore says so.
    fn state_signature(&self) -> String;
    /// The kind as a user writes it in messages.
    fn what(&self) -> &'static str;
    /// One line for `sluice explain`.
    fn describe(&self) -> String {
        self.what().to_string()
    }
    /// It aggregates what it reads, so an updating input must reach it as a retraction of the
    /// previous value followed by the new one.
    fn takes_retractions(&self) -> bool {
        false
    }
    /// It works in event time (windows, joins bounded in time, dedupe and Top-N by time), so
    /// an input from a source without event time is refused.
    fn needs_event_time(&self) -> bool {
        true
    }
    /// Its output rows carry event time (a window's, a time-bounded join's); a group aggregate's
    /// and a regular join's do not, as in Flink, so event-time operators refuse them.
    fn keeps_event_time(&self) -> bool {
        true
    }
    /// The operator one shard runs for it.
    fn build(&self, ctx: BuildCtx) -> Box<dyn Operator>;
    /// Its phase one (a combiner where events are read), with its `hot_keys` settings, if it
    /// runs two-phase.
    fn combiner(&self) -> Option<(Box<dyn Combine>, HotKeysPlan)> {
        None
    }
}

/// `TransformConfig`: `type = "<kind>"` names the variant, whose table is the kind's config.
macro_rules! transform_kinds {
    ($($variant:ident => $table:ty),* $(,)?) => {
        /// `[transforms.NAME]`: one of the operator kinds (or a step), by its `type`.
        #[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        pub enum TransformConfig {
            $($variant($table),)*
        }

        impl TransformConfig {
            /// The table of whichever kind this is.
            pub(crate) fn table(&self) -> &dyn TransformTable {
                match self {
                    $(TransformConfig::$variant(t) => t,)*
                }
            }

            fn table_mut(&mut self) -> &mut dyn TransformTable {
                match self {
                    $(TransformConfig::$variant(t) => t,)*
                }
            }
        }
    };
}

/// `NodeKind`: the plan's node of each operator kind.
macro_rules! node_kinds {
    ($($variant:ident => $plan:ty),* $(,)?) => {
        /// A node's operator kind and its plan.
        #[derive(Debug, Clone, PartialEq)]
        pub enum NodeKind {
            $($variant($plan),)*
        }

        impl NodeKind {
            /// The node's plan as its kind's [`NodeSpec`].
            pub fn spec(&self) -> &dyn NodeSpec {
                match self {
                    $(NodeKind::$variant(p) => p,)*
                }
            }
        }
    };
}

transform_kinds! {
    Window => window::config::WindowTransformConfig,
    Filter => steps::config::FilterTransformConfig,
    Select => steps::config::SelectTransformConfig,
    TemporalJoin => temporal_join::config::TemporalJoinConfig,
    IntervalJoin => interval_join::config::IntervalJoinConfig,
    Join => regular_join::config::RegularJoinConfig,
    Dedupe => dedupe::config::DedupeConfig,
    TopN => top_n::config::TopNConfig,
    Rank => rank::config::RankConfig,
    GroupAggregate => group_agg::config::GroupAggregateConfig,
    OverAggregate => over_agg::config::OverAggregateConfig,
}

node_kinds! {
    Window => window::plan::WindowPlan,
    TemporalJoin => temporal_join::plan::TemporalJoinPlan,
    IntervalJoin => interval_join::plan::IntervalJoinPlan,
    RegularJoin => regular_join::plan::RegularJoinPlan,
    Dedupe => dedupe::plan::DedupePlan,
    TopN => top_n::plan::TopNPlan,
    Rank => rank::plan::RankPlan,
    GroupAggregate => group_agg::plan::GroupAggPlan,
    OverAggregate => over_agg::plan::OverAggPlan,
}

impl TransformConfig {
    /// Every stream name this transform reads, with the key that names it: (`inputs`, Some(2),
    /// name) for `inputs[2]`, (`left`, None, name) for `left`.
    pub fn input_names(&self) -> Vec<(&'static str, Option<usize>, &str)> {
        self.table().input_names()
    }

    /// Renames the streams it reads that `rename` has a new name for; whether any was.
    pub fn rename_inputs(&mut self, rename: &dyn Fn(&str) -> Option<String>) -> bool {
        let mut changed = false;
        self.table_mut().each_input(&mut |name: &mut String| {
            if let Some(to) = rename(name) {
                *name = to;
                changed = true;
            }
        });
        changed
    }

    /// The name of its late side output, if it has one.
    pub fn late_events(&self) -> Option<&str> {
        self.table().late_events()
    }

    /// Its `inputs` list (empty for a join, whose inputs are named one by one).
    pub fn inputs(&self) -> &[String] {
        self.table().inputs()
    }
}

impl NodeKind {
    /// See [`NodeSpec::state_signature`].
    pub fn state_signature(&self) -> String {
        self.spec().state_signature()
    }

    /// See [`NodeSpec::what`].
    pub fn what(&self) -> &'static str {
        self.spec().what()
    }
}
