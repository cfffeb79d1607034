//! Validation of `type = "interval_join"` and of `type = "join"` with a `ttl` (a regular join
//! whose state expires in event time is the interval join whose bounds are its TTL): their `left` and `right` inputs (any stream
//! that carries no updates), the `on` fields (checked against both sides), the bounds, and the
//! two ports, which keep whole records, so their events carry the row by value.
//!
//! Also the node it validates into, [`IntervalJoinPlan`], and the kind's two registry entries
//! (`TransformTable` for its table, [`NodeSpec`] for its node).

use crate::config::{IntervalJoinConfig, IntervalJoinKind, KeyPath};
use crate::expr::FieldPath;
use crate::operators::regular_join::config::RegularJoinConfig;
use crate::operators::{table_inputs, BuildCtx, NodeKind, NodeSpec, Operator, TransformTable};
use crate::plan::build::graph::{refuse_hot_keys, Graph, Input, NodeDraft, PortDraft};
use crate::plan::build::schema::{late_schema, merged, Schema};
use crate::plan::build::Builder;

/// What an interval join and a regular join both are: two inputs keyed on `on`, rows of the
/// right side matching a left row whose time is within `bounds_ms` of theirs (right - left).
struct TwoSided<'a> {
    what: &'static str,
    left: &'a str,
    right: &'a str,
    on: &'a [String],
    bounds_ms: (i64, i64),
    kind: IntervalJoinKind,
    late_events: &'a Option<String>,
    hot_keys: &'a Option<toml::Value>,
}

/// An event-time interval join of two streams on equal fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntervalJoinPlan {
    pub on: Vec<FieldPath>,
    pub lower_ms: i64,
    pub upper_ms: i64,
    /// Emit unmatched rows of (left, right).
    pub outer: [bool; 2],
}

impl Builder<'_> {
    pub(crate) fn interval_join(&mut self, name: &str, j: &IntervalJoinConfig, g: &mut Graph<'_>) {
        let (lower_ms, upper_ms) = (j.between[0].as_millis(), j.between[1].as_millis());
        if lower_ms > upper_ms {
            self.err(
                KeyPath::new(["transforms", name, "between"]),
                format!("lower bound {} is above upper bound {}: right - left must be within [lower, upper]", j.between[0], j.between[1]),
            );
        }
        let spec = TwoSided {
            what: "an interval join",
            left: &j.left,
            right: &j.right,
            on: &j.on,
            bounds_ms: (lower_ms, upper_ms),
            kind: j.kind,
            late_events: &j.late_events,
            hot_keys: &j.hot_keys,
        };
        self.two_sided(name, &spec, g);
    }

    /// A regular join with event-time state TTL is the interval join whose bounds are `±ttl`:
    /// a row waits for matches until the watermark passes its time + `ttl`, on either side.
    pub(crate) fn ttl_join(
        &mut self,
        name: &str,
        j: &RegularJoinConfig,
        ttl: i64,
        g: &mut Graph<'_>,
    ) {
        if ttl <= 0 {
            self.err(
                KeyPath::new(["transforms", name, "ttl"]),
                "a regular join's ttl must be positive (how long, in event time, a row waits for its matches); leave it out to keep every row until it is retracted, as Flink does without a state TTL".into(),
            );
        }
        // An outer kind pads a row once the ttl has passed without a match: final, so the
        // result stays append-only, and it materialises as Flink's padded-then-retracted rows.
        let spec = TwoSided {
            what: "a regular join",
            left: &j.left,
            right: &j.right,
            on: &j.on,
            bounds_ms: (ttl.saturating_neg(), ttl),
            kind: j.kind,
            late_events: &j.late_events,
            hot_keys: &j.hot_keys,
        };
        self.two_sided(name, &spec, g);
    }

    /// The node of an interval or regular join: both sides keep rows by value, keyed on `on`.
    fn two_sided(&mut self, name: &str, j: &TwoSided<'_>, g: &mut Graph<'_>) {
        refuse_hot_keys(self, name, j.what, j.hot_keys);
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        let left = self.side(g, name, "left", j.left, j.what);
        let right = self.side(g, name, "right", j.right, j.what);
        if j.on.is_empty() {
            self.err(
                at("on"),
                format!(
                    "{} needs at least one field to match on, e.g. on = [\"imp_id\"]",
                    j.what
                ),
            );
        }
        let on = self.key_fields(&at("on"), j.on, &[&left, &right]);
        let (lower_ms, upper_ms) = j.bounds_ms;
        let outer = match j.kind {
            IntervalJoinKind::Inner => [false, false],
            IntervalJoinKind::Left => [true, false],
            IntervalJoinKind::Right => [false, true],
            IntervalJoinKind::Full => [true, true],
        };
        // An unmatched left row leaves at `tl + upper`, an unmatched right one at `tr - lower`,
        // with its own time: the watermark passed on waits that long, so neither is late
        // downstream. Pairs leave when their later row arrives, never behind the watermark.
        let hold_ms = [(outer[0], upper_ms), (outer[1], lower_ms.saturating_neg())]
            .iter()
            .filter(|(o, _)| *o)
            .map(|(_, h)| *h)
            .max()
            .unwrap_or(0)
            .max(0);
        let side_schema =
            |s: &[Input]| merged(&s.iter().flat_map(|i| i.known.clone()).collect::<Vec<_>>());
        let mut output = Schema::closed(j.on.iter().map(String::as_str));
        output.fields.push(("left".into(), side_schema(&left)));
        output.fields.push(("right".into(), side_schema(&right)));
        let late = late_schema(&[left.clone(), right.clone()].concat());
        let draft = NodeDraft {
            kind: NodeKind::IntervalJoin(IntervalJoinPlan {
                on: on.clone(),
                lower_ms,
                upper_ms,
                outer,
            }),
            late_events: j.late_events.clone(),
            hold_ms,
            updates: false,
            unretractable: false,
            changelog: false,
            output,
            late,
        };
        let port = |name, inputs| PortDraft {
            name,
            key: on.clone(),
            values: Vec::new(),
            row: true,
            inputs,
            changes: false,
        };
        let ports = vec![port("left", left), port("right", right)];
        g.add_node(self, name, draft, ports);
    }
}

impl TransformTable for IntervalJoinConfig {
    table_inputs!(left, right);
    fn late_events(&self) -> Option<&str> {
        self.late_events.as_deref()
    }
    fn validate(&self, name: &str, b: &mut Builder<'_>, g: &mut Graph<'_>) {
        b.interval_join(name, self, g);
    }
}

impl NodeSpec for IntervalJoinPlan {
    fn state_signature(&self) -> String {
        format!(
            "IntervalJoin on {:?} (rows by value)",
            self.on.iter().map(FieldPath::as_str).collect::<Vec<_>>()
        )
    }
    fn what(&self) -> &'static str {
        "interval join"
    }
    fn build(&self, ctx: BuildCtx) -> Box<dyn Operator> {
        Box::new(super::IntervalJoin::new(self, ctx))
    }
}
