//! Validation of temporal, interval and regular joins and of dedupe: their inputs (any stream that carries
//! no updates), their key fields (checked against what the inputs are known to hold), and their
//! ports. All three keep whole records, so their events carry the row by value.

use super::graph::{check_fields, field_path, refuse_updates, Graph, Input, NodeDraft, PortDraft};
use super::schema::{merged, Schema};
use super::window::late_schema;
use super::Builder;
use crate::config::{
    DedupeConfig, IntervalJoinConfig, IntervalJoinKind, KeyPath, RegularJoinConfig,
    TemporalJoinConfig, TemporalJoinKind,
};
use crate::expr::FieldPath;
use crate::plan::{DedupePlan, IntervalJoinPlan, NodeKind, TemporalJoinPlan};

/// Joins and dedupe keep rows, not accumulators: there is nothing to combine in a phase one.
fn refuse_hot_keys(b: &mut Builder<'_>, name: &str, what: &str, h: &Option<toml::Value>) {
    if h.is_some() {
        b.err(
            KeyPath::new(["transforms", name, "hot_keys"]),
            format!("{what} cannot be salted: it must see every row of a key in one place and in event-time order (rows are matched or dropped one by one, not summed), so rows cannot be combined into partial results on other shards; hot_keys applies to tumbling, sliding and cumulative windows"),
        );
    }
}

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

impl Builder<'_> {
    /// One named input of a join (`left`, `table`, ...), refusing updates.
    fn side(&mut self, g: &Graph<'_>, name: &str, k: &str, input: &str, what: &str) -> Vec<Input> {
        let key = KeyPath::new(["transforms", name, k]);
        let inputs: Vec<Input> = g.input(self, key.clone(), input).into_iter().collect();
        refuse_updates(self, &key, &inputs, what);
        inputs
    }

    /// Key fields `fields` (at `key`), checked against every input.
    pub(super) fn key_fields(
        &mut self,
        key: &KeyPath,
        fields: &[String],
        inputs: &[&[Input]],
    ) -> Vec<FieldPath> {
        let mut out = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            let k = key.clone().index(i);
            if fields[..i].contains(f) {
                self.err(k, format!("`{f}` is listed twice"));
                continue;
            }
            if let Some(p) = field_path(self, &k, f) {
                for side in inputs {
                    check_fields(self, &k, side, &p);
                }
                out.push(p);
            }
        }
        out
    }

    pub(super) fn temporal_join(&mut self, name: &str, j: &TemporalJoinConfig, g: &mut Graph<'_>) {
        refuse_hot_keys(self, name, "a temporal join", &j.hot_keys);
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        let input = self.side(g, name, "input", &j.input, "a temporal join");
        let table = self.side(g, name, "table", &j.table, "a temporal join");
        let on_input = field_path(self, &at("on").key("input"), &j.on.input);
        let on_table = field_path(self, &at("on").key("table"), &j.on.table);
        if let Some(p) = &on_input {
            check_fields(self, &at("on").key("input"), &input, p);
        }
        if let Some(p) = &on_table {
            check_fields(self, &at("on").key("table"), &table, p);
        }
        let (Some(on_input), Some(on_table)) = (on_input, on_table) else {
            return;
        };
        let table_schema = merged(
            &table
                .iter()
                .flat_map(|i| i.known.clone())
                .collect::<Vec<_>>(),
        );
        let mut output = merged(
            &input
                .iter()
                .flat_map(|i| i.known.clone())
                .collect::<Vec<_>>(),
        );
        output.fields.retain(|(n, _)| n != "table");
        output.fields.push(("table".into(), table_schema));
        let late = late_schema(&[input.clone(), table.clone()].concat());
        let draft = NodeDraft {
            kind: NodeKind::TemporalJoin(TemporalJoinPlan {
                on_input: on_input.clone(),
                on_table: on_table.clone(),
                left: j.kind == TemporalJoinKind::Left,
                drop_older_versions: j.out_of_order_versions
                    == crate::config::OutOfOrderVersions::Drop,
            }),
            late_events: j.late_events.clone(),
            hold_ms: 0,
            updates: false,
            unretractable: false,
            output,
            late,
        };
        let ports = vec![
            PortDraft {
                name: "input",
                key: vec![on_input],
                values: Vec::new(),
                row: true,
                inputs: input,
            },
            PortDraft {
                name: "table",
                key: vec![on_table],
                values: Vec::new(),
                row: true,
                inputs: table,
            },
        ];
        g.add_node(name, draft, ports);
    }

    pub(super) fn interval_join(&mut self, name: &str, j: &IntervalJoinConfig, g: &mut Graph<'_>) {
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
    pub(super) fn regular_join(&mut self, name: &str, j: &RegularJoinConfig, g: &mut Graph<'_>) {
        let ttl = j.ttl.as_millis();
        if ttl <= 0 {
            self.err(
                KeyPath::new(["transforms", name, "ttl"]),
                "a regular join needs a positive ttl (how long, in event time, a row waits for its matches; Flink's 0 means forever, which bounded state cannot do)".into(),
            );
        }
        if j.kind != IntervalJoinKind::Inner {
            self.err(
                KeyPath::new(["transforms", name, "kind"]),
                "a regular join is inner only: an outer one's result updates (Flink retracts a NULL-padded row when its match arrives); use an interval_join, whose unmatched rows are final once its bound passes".into(),
            );
        }
        let spec = TwoSided {
            what: "a regular join",
            left: &j.left,
            right: &j.right,
            on: &j.on,
            bounds_ms: (ttl.saturating_neg(), ttl),
            kind: IntervalJoinKind::Inner,
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
            output,
            late,
        };
        let port = |name, inputs| PortDraft {
            name,
            key: on.clone(),
            values: Vec::new(),
            row: true,
            inputs,
        };
        let ports = vec![port("left", left), port("right", right)];
        g.add_node(name, draft, ports);
    }

    pub(super) fn dedupe(&mut self, name: &str, d: &DedupeConfig, g: &mut Graph<'_>) {
        refuse_hot_keys(self, name, "dedupe", &d.hot_keys);
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        if d.inputs.is_empty() {
            self.err(at("inputs"), "a dedupe needs at least one input".into());
        }
        let inputs = g.inputs(self, at("inputs"), &d.inputs);
        refuse_updates(self, &at("inputs"), &inputs, "a dedupe");
        if d.key.is_empty() {
            self.err(
                at("key"),
                "a dedupe needs at least one key field, e.g. key = [\"click_id\"]".into(),
            );
        }
        let key = self.key_fields(&at("key"), &d.key, &[&inputs]);
        if d.horizon.as_millis() <= 0 {
            self.err(
                at("horizon"),
                "must be longer than 0s: ids are remembered this long".into(),
            );
        }
        let output = merged(
            &inputs
                .iter()
                .flat_map(|i| i.known.clone())
                .collect::<Vec<_>>(),
        );
        let late = late_schema(&inputs);
        let draft = NodeDraft {
            kind: NodeKind::Dedupe(DedupePlan {
                key: key.clone(),
                horizon_ms: d.horizon.as_millis(),
            }),
            late_events: d.late_events.clone(),
            hold_ms: 0,
            updates: false,
            unretractable: false,
            output,
            late,
        };
        let port = PortDraft {
            name: "inputs",
            key,
            values: Vec::new(),
            row: true,
            inputs,
        };
        g.add_node(name, draft, vec![port]);
    }
}
