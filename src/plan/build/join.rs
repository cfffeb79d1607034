//! Validation of temporal and interval joins: both sides are sources (distinct ones: a record's side is told by
//! the source it was read from), keyed on one non-empty field each.

use super::{Builder, Stream, Streams};
use crate::config::{
    DedupeConfig, IntervalJoinConfig, IntervalJoinKind, KeyPath, TemporalJoinConfig,
    TemporalJoinKind,
};
use crate::plan::{DedupePlan, IntervalJoinPlan, JoinPlan};

/// Joins and dedupe keep rows, not accumulators: there is nothing to combine in a phase one.
fn refuse_hot_keys(b: &mut Builder<'_>, name: &str, what: &str, h: &Option<toml::Value>) {
    if h.is_some() {
        b.err(
            KeyPath::new(["transforms", name, "hot_keys"]),
            format!("{what} cannot be salted: it must see every row of a key in one place and in event-time order (rows are matched or dropped one by one, not summed), so rows cannot be combined into partial results on other shards; hot_keys applies to tumbling, sliding and cumulative windows"),
        );
    }
}

impl Builder<'_> {
    pub(super) fn join(
        &mut self,
        name: &str,
        j: &TemporalJoinConfig,
        streams: &Streams<'_>,
    ) -> JoinPlan {
        refuse_hot_keys(self, name, "a temporal join", &j.hot_keys);
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        let side = |b: &mut Self, k: &str, input: &str| match streams.get(input) {
            Some(Stream::Source(s)) => s,
            Some(_) => {
                b.err(at(k), format!("`{input}` is not a source; a temporal join reads two sources (joins over transforms are not supported yet)"));
                0
            }
            None => {
                let hint = streams.hint(input, |s| matches!(s, Stream::Source(_)));
                b.err(at(k), format!("unknown source `{input}`{hint}"));
                0
            }
        };
        let input = side(self, "input", &j.input);
        let table = side(self, "table", &j.table);
        if j.input == j.table {
            self.err(
                at("table"),
                format!(
                    "`{}` is both input and table; a temporal join needs two sources",
                    j.table
                ),
            );
        }
        for (k, f) in [("input", &j.on.input), ("table", &j.on.table)] {
            if f.is_empty() {
                self.err(at("on").key(k), "a field name cannot be empty".into());
            }
        }
        JoinPlan {
            name: name.to_string(),
            input,
            table,
            on_input: j.on.input.clone(),
            on_table: j.on.table.clone(),
            left: j.kind == TemporalJoinKind::Left,
        }
    }
}

impl Builder<'_> {
    pub(super) fn interval_join(
        &mut self,
        name: &str,
        j: &IntervalJoinConfig,
        streams: &Streams<'_>,
    ) -> IntervalJoinPlan {
        refuse_hot_keys(self, name, "an interval join", &j.hot_keys);
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        let left = self.join_side(at("left"), &j.left, streams);
        let right = self.join_side(at("right"), &j.right, streams);
        if j.left == j.right {
            self.err(
                at("right"),
                format!(
                    "`{}` is both left and right; an interval join needs two sources",
                    j.right
                ),
            );
        }
        if j.on.is_empty() {
            self.err(
                at("on"),
                "an interval join needs at least one field to match on, e.g. on = [\"imp_id\"]"
                    .into(),
            );
        }
        for (i, f) in j.on.iter().enumerate() {
            if f.is_empty() {
                self.err(at("on").index(i), "a field name cannot be empty".into());
            } else if j.on[..i].contains(f) {
                self.err(at("on").index(i), format!("`{f}` is listed twice"));
            }
        }
        let (lower_ms, upper_ms) = (j.between[0].as_millis(), j.between[1].as_millis());
        if lower_ms > upper_ms {
            self.err(
                at("between"),
                format!("lower bound {} is above upper bound {}: right - left must be within [lower, upper]", j.between[0], j.between[1]),
            );
        }
        let outer = match j.kind {
            IntervalJoinKind::Inner => [false, false],
            IntervalJoinKind::Left => [true, false],
            IntervalJoinKind::Right => [false, true],
            IntervalJoinKind::Full => [true, true],
        };
        IntervalJoinPlan {
            name: name.to_string(),
            left,
            right,
            on: j.on.clone(),
            lower_ms,
            upper_ms,
            outer,
            late_events: j.late_events.clone(),
        }
    }

    /// A join side must name a source.
    fn join_side(&mut self, key: KeyPath, input: &str, streams: &Streams<'_>) -> usize {
        match streams.get(input) {
            Some(Stream::Source(s)) => s,
            Some(_) => {
                self.err(key, format!("`{input}` is not a source; a join reads two sources (joins over transforms are not supported yet)"));
                0
            }
            None => {
                let hint = streams.hint(input, |s| matches!(s, Stream::Source(_)));
                self.err(key, format!("unknown source `{input}`{hint}"));
                0
            }
        }
    }
}

impl Builder<'_> {
    pub(super) fn dedupe(
        &mut self,
        name: &str,
        d: &DedupeConfig,
        streams: &Streams<'_>,
    ) -> DedupePlan {
        refuse_hot_keys(self, name, "dedupe", &d.hot_keys);
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        let mut inputs = Vec::new();
        if d.inputs.is_empty() {
            self.err(
                at("inputs"),
                "a dedupe needs at least one input source".into(),
            );
        }
        for (i, input) in d.inputs.iter().enumerate() {
            let s = self.join_side(at("inputs").index(i), input, streams);
            if inputs.contains(&s) {
                self.err(at("inputs").index(i), format!("`{input}` is listed twice"));
            }
            inputs.push(s);
        }
        if d.key.is_empty() {
            self.err(
                at("key"),
                "a dedupe needs at least one key field, e.g. key = [\"click_id\"]".into(),
            );
        }
        for (i, f) in d.key.iter().enumerate() {
            if f.is_empty() {
                self.err(at("key").index(i), "a field name cannot be empty".into());
            }
        }
        if d.horizon.as_millis() <= 0 {
            self.err(
                at("horizon"),
                "must be longer than 0s: ids are remembered this long".into(),
            );
        }
        DedupePlan {
            name: name.to_string(),
            inputs,
            key: d.key.clone(),
            horizon_ms: d.horizon.as_millis(),
            late_events: d.late_events.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::plan::build;

    const BASE: &str = "[sources.imps]\ntype = \"file\"\npath = \"i\"\nformat = \"json\"\nevent_time = { field = \"ts\" }\n\n[sources.clicks]\ntype = \"file\"\npath = \"c\"\nformat = \"json\"\nevent_time = { field = \"ts\" }\n\n[transforms.m]\ntype = \"interval_join\"\nleft = \"imps\"\nright = \"clicks\"\non = [\"imp_id\"]\nbetween = [\"-5s\", \"10s\"]\nkind = \"full\"\n\n[sinks.o]\ntype = \"stdout\"\ninputs = [\"m\"]\n";

    fn plan(text: &str) -> Result<crate::plan::Plan, String> {
        let (config, src) = parse(text, "p.toml").map_err(|e| e.to_string())?;
        build(&config, &src).map_err(|e| e.to_string())
    }

    #[test]
    fn bounds_may_be_negative_and_sides_are_sources() {
        let p = plan(BASE).unwrap();
        let j = &p.interval_joins[0];
        assert_eq!(
            (j.lower_ms, j.upper_ms, j.outer),
            (-5_000, 10_000, [true, true])
        );
        // clicks (0) is the right side, imps (1) the left.
        assert_eq!((j.left, j.right), (1, 0));
        let e = plan(&BASE.replace("[\"-5s\", \"10s\"]", "[\"10s\", \"-5s\"]")).unwrap_err();
        assert!(
            e.contains("transforms.m.between")
                && e.contains("lower bound 10s is above upper bound -5s"),
            "{e}"
        );
        let e = plan(&BASE.replace("right = \"clicks\"", "right = \"imps\"")).unwrap_err();
        assert!(e.contains("both left and right"), "{e}");
        let e = plan(&BASE.replace("right = \"clicks\"", "right = \"clics\"")).unwrap_err();
        assert!(
            e.contains("unknown source `clics`") && e.contains("clicks"),
            "{e}"
        );
    }
}
