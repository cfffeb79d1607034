//! Filters and selects in the plan: paths from sources through chains, fields checked where they
//! are known, expression errors with a caret, cycles and unsupported inputs refused by key.

use super::super::build;
use crate::config::parse;
use crate::plan::{InputPath, Plan, StageKind, StreamRef};

const BASE: &str = r#"[sources.orders]
type = "file"
path = "orders.ndjson"
format = "json"
event_time = { field = "ts", unit = "ms" }

[sources.clicks]
type = "generator"

[transforms.priced]
type = "select"
inputs = ["orders"]
fields = { id = "order_id", usd = "amount * rate", currency = "currency" }

[transforms.big]
type = "filter"
inputs = ["priced"]
where = "usd >= 1000"

[transforms.per_currency]
type = "window"
inputs = ["big"]
group_by = ["currency"]
window = { type = "tumbling", size = "1m" }
aggregates = { n = "count()", total = "sum(usd)" }

[sinks.out]
type = "stdout"
inputs = ["big", "per_currency"]
"#;

fn plan(text: &str) -> Result<Plan, String> {
    let (config, src) = parse(text, "p.toml").map_err(|e| e.to_string())?;
    build(&config, &src).map_err(|e| e.to_string())
}

fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "BASE has no {from:?}");
    BASE.replacen(from, to, 1)
}

#[test]
fn chains_resolve_to_paths_from_their_sources() {
    let p = plan(BASE).unwrap();
    let names: Vec<&str> = p.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["big", "priced"], "stages by name");
    assert!(
        matches!(&p.stages[1].kind, StageKind::Select { fields } if fields[1] == ("usd".into(), "amount * rate".into()))
    );
    // orders is source 1 (by name: clicks, orders); the chain runs priced (1) then big (0).
    let path = InputPath {
        source: 1,
        chain: vec![1, 0],
    };
    assert_eq!(p.windows[0].via, vec![path.clone()]);
    assert!(p.windows[0].inputs.is_empty());
    assert_eq!(p.sinks[0].records, vec![path]);
    assert_eq!(p.sinks[0].inputs, vec![StreamRef::Window(0)]);
}

#[test]
fn expression_errors_point_at_the_key_and_the_column() {
    let e = plan(&with("usd >= 1000", "usd >= = 1000")).unwrap_err();
    assert!(
        e.contains("transforms.big.where: invalid expression"),
        "{e}"
    );
    assert!(
        e.contains("usd >= = 1000\n") && e.contains("\n         ^"),
        "{e}"
    );
    let e = plan(&with("amount * rate", "amount * rat(e)")).unwrap_err();
    assert!(
        e.contains("transforms.priced.fields.usd") && e.contains("unknown function"),
        "{e}"
    );
}

#[test]
fn fields_are_checked_where_the_records_are_known() {
    // A window over a select groups by one of its fields...
    let e = plan(&with(
        "group_by = [\"currency\"]",
        "group_by = [\"curency\"]",
    ))
    .unwrap_err();
    assert!(
        e.contains("field `curency` is not among the fields of select `big`")
            && e.contains("did you mean `currency`"),
        "{e}"
    );
    // ...a filter after a select reads its fields...
    let e = plan(&with("usd >= 1000", "amount >= 1000")).unwrap_err();
    assert!(
        e.contains("transforms.big.where") && e.contains("reads field `amount`"),
        "{e}"
    );
    // ...and a select over a generator reads the generator's.
    let e = plan(&with("inputs = [\"orders\"]", "inputs = [\"clicks\"]")).unwrap_err();
    assert!(
        e.contains("reads field `order_id`") && e.contains("generator source `clicks`"),
        "{e}"
    );
}

#[test]
fn cycles_and_windows_over_window_results_are_refused_by_key() {
    let e = plan(&with("inputs = [\"orders\"]", "inputs = [\"big\"]")).unwrap_err();
    assert!(e.contains("transforms form a cycle"), "{e}");
    // big now filters per_currency's results, which read big: the window is refused, and big's
    // condition is checked against the window's fields.
    let e = plan(&with(
        "inputs = [\"priced\"]",
        "inputs = [\"per_currency\"]",
    ))
    .unwrap_err();
    assert!(
        e.contains("transforms.per_currency.inputs[0]")
            && e.contains("windows over window results are not supported")
            && e.contains("reads field `usd`, which records of window `per_currency` do not have"),
        "{e}"
    );
}

#[test]
fn a_filter_over_window_results_reads_the_windows_fields() {
    let text = format!(
        "{BASE}\n[transforms.having]\ntype = \"filter\"\ninputs = [\"per_currency\"]\nwhere = \"n >= 2\"\n\n[sinks.busy]\ntype = \"stdout\"\ninputs = [\"having\"]\n"
    );
    let p = plan(&text).unwrap();
    // stages by name: big (0), having (1), priced (2); per_currency is window 0.
    assert_eq!(p.sinks[0].name, "busy");
    assert_eq!(p.sinks[0].results_via, vec![(0, vec![1])]);
    assert!(p.sinks[0].records.is_empty() && p.sinks[0].inputs.is_empty());
    let bad = text.replace("n >= 2", "count >= 2");
    let e = plan(&bad).unwrap_err();
    assert!(
        e.contains("reads field `count`") && e.contains("window_start"),
        "{e}"
    );
}
