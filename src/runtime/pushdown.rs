//! Binding through filters and a select: a chain of filters only passes the source line on as it
//! is, so its readers bind that line; when a source's chain is filters followed by one select whose every
//! field the readers use is a copy of an input field (`ad_id = "ad_id"`, `country = "user.country"`),
//! the readers' bindings are rewritten onto the chain's input, so a kept record is bound straight
//! from the source line instead of the select writing JSON that the binding then scans again. The
//! values are the same: a plain select copies each token as it is, and a field it copies from a
//! missing path is null either way. Readers that keep the record itself (a row) still need the
//! select's output, and are left as they are.

use crate::expr::{self, FieldPath, Segment};
use crate::plan::{StepKind, StepPlan};
use crate::record::bind::Binding;

/// How a source route's readers can be bound.
pub struct Pushed {
    /// The steps still to run on a record (the filters before the select).
    pub steps: Vec<usize>,
    /// The readers' bindings, onto the chain's input record.
    pub ports: Vec<Binding>,
}

/// `ports` rewritten onto the input of chain `chain` (step ids into `steps`), or `None` when the
/// chain is not filters then one select of plain fields covering every path the ports read.
pub fn through_chain(steps: &[StepPlan], chain: &[usize], ports: &[Binding]) -> Option<Pushed> {
    let is_filter = |s: &usize| {
        matches!(
            steps.get(*s).map(|p| &p.kind),
            Some(StepKind::Filter { .. })
        )
    };
    // Filters pass the record on unchanged: every binding (a row too) reads the input as it is.
    if !chain.is_empty() && chain.iter().all(is_filter) {
        return Some(Pushed {
            steps: chain.to_vec(),
            ports: ports.to_vec(),
        });
    }
    let (&last, filters) = chain.split_last()?;
    let StepKind::Select { fields } = &steps.get(last)?.kind else {
        return None;
    };
    if !filters.iter().all(is_filter) || ports.iter().any(|b| b.row) {
        return None;
    }
    let mut copies: Vec<(&str, FieldPath)> = Vec::with_capacity(fields.len());
    for (name, text) in fields {
        if let Some(p) = expr::compile(text).ok().and_then(|e| e.as_field().cloned()) {
            copies.push((name.as_str(), p));
        }
    }
    let rewrite = |p: &FieldPath| -> Option<FieldPath> {
        let (Segment::Key(head), rest) = p.segments().split_first()? else {
            return None;
        };
        let (_, from) = copies.iter().find(|(n, _)| n == head)?;
        let segments: Vec<Segment> = from.segments().iter().chain(rest).cloned().collect();
        // Bindings step only into objects: an element a select takes out of an array
        // (`first = "items[0]"`) is read from the select's output.
        if segments.iter().any(|s| matches!(s, Segment::Index(_))) {
            return None;
        }
        FieldPath::new(segments)
    };
    let ports = ports
        .iter()
        .map(|b| {
            Some(Binding {
                port: b.port,
                key: b.key.iter().map(rewrite).collect::<Option<_>>()?,
                values: b
                    .values
                    .iter()
                    .map(|(p, u)| Some((rewrite(p)?, *u)))
                    .collect::<Option<_>>()?,
                row: false,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Pushed {
        steps: filters.to_vec(),
        ports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::SlotUse;

    fn path(s: &str) -> FieldPath {
        FieldPath::parse(s).unwrap()
    }

    fn steps() -> Vec<StepPlan> {
        let select = |f: &[(&str, &str)]| StepKind::Select {
            fields: f
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        };
        vec![
            StepPlan {
                name: "f".into(),
                kind: StepKind::Filter {
                    condition: "bid > 0".into(),
                },
            },
            StepPlan {
                name: "plain".into(),
                kind: select(&[
                    ("ad", "ad_id"),
                    ("c", "user.country"),
                    ("bid", "bid"),
                    ("first", "items[0]"),
                ]),
            },
            StepPlan {
                name: "computed".into(),
                kind: select(&[("ad", "ad_id"), ("cents", "bid * 100")]),
            },
        ]
    }

    fn window_port(key: &str, value: &str) -> Binding {
        Binding {
            port: 4,
            key: vec![path(key)],
            values: vec![(path(value), SlotUse::Number)],
            row: false,
        }
    }

    #[test]
    fn plain_fields_bind_through_the_select_onto_the_source_line() {
        let p = through_chain(&steps(), &[0, 1], &[window_port("c.code", "bid")]).unwrap();
        assert_eq!(
            p.steps,
            vec![0],
            "the filter still runs; the select does not"
        );
        assert_eq!(p.ports[0].key, vec![path("user.country.code")]);
        assert_eq!(p.ports[0].values[0].0, path("bid"));
        assert_eq!(p.ports[0].port, 4);
    }

    #[test]
    fn computed_or_missing_fields_rows_and_steps_after_the_select_are_left_alone() {
        let s = steps();
        // A computed field is read.
        assert!(through_chain(&s, &[2], &[window_port("ad", "cents")]).is_none());
        // The computed one is not read: the rest are plain.
        assert!(through_chain(&s, &[2], &[window_port("ad", "ad")]).is_some());
        // A field the select does not output (null after it) cannot be found on the line.
        assert!(through_chain(&s, &[1], &[window_port("ad", "nope")]).is_none());
        // A reader that keeps the record needs the select's output.
        let mut row = window_port("ad", "bid");
        row.row = true;
        assert!(through_chain(&s, &[1], &[row]).is_none());
        // An element taken out of an array cannot be bound on the line.
        assert!(through_chain(&s, &[1], &[window_port("first", "bid")]).is_none());
        // A filter after the select reads the select's output.
        assert!(through_chain(&s, &[1, 0], &[window_port("ad", "bid")]).is_none());
    }

    #[test]
    fn a_chain_of_filters_only_binds_the_line_as_it_is() {
        let s = steps();
        let mut row = window_port("ad", "bid");
        row.row = true;
        let ports = vec![window_port("ad", "bid"), row];
        let p = through_chain(&s, &[0], &ports).expect("filters pass the line on");
        assert_eq!(p.steps, vec![0]);
        assert_eq!(p.ports, ports);
        assert!(through_chain(&s, &[], &ports).is_none());
    }
}
