//! The graph in the plan: any operator reads any stream, through steps, any number of levels deep;
//! depths, holds and updates are worked out; field paths are checked against what upstream
//! operators produce; what cannot work is refused by key with the reason.

use crate::config::parse;
use crate::plan::build::build;
use crate::plan::{Edge, NodeKind, Plan, StepKind, StreamRef};
use std::path::Path;

const STEPS: &str = r#"[sources.orders]
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
    assert!(STEPS.contains(from), "STEPS has no {from:?}");
    STEPS.replacen(from, to, 1)
}

fn node(p: &Plan, name: &str) -> usize {
    p.nodes
        .iter()
        .position(|n| n.name == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

#[test]
fn chains_resolve_to_edges_from_their_streams() {
    let p = plan(STEPS).unwrap();
    // Steps are validated in dependency order: priced, then big.
    let names: Vec<&str> = p.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["priced", "big"]);
    assert!(
        matches!(&p.steps[0].kind, StepKind::Select { fields } if fields[1] == ("usd".into(), "amount * rate".into()))
    );
    // orders is source 1 (by name: clicks, orders); the chain runs priced (0) then big (1).
    let edge = Edge {
        from: StreamRef::Source(1),
        steps: vec![0, 1],
    };
    assert_eq!(p.ports[0].inputs, vec![edge.clone()]);
    assert_eq!(
        p.sinks[0].inputs,
        vec![
            edge,
            Edge {
                from: StreamRef::Node(0),
                steps: vec![]
            }
        ]
    );
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
        e.contains("field `curency` is not produced by select `priced`")
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
fn a_filter_over_window_results_is_a_having_and_cycles_are_refused() {
    let text = format!(
        "{STEPS}\n[transforms.having]\ntype = \"filter\"\ninputs = [\"per_currency\"]\nwhere = \"n >= 2\"\n\n[sinks.busy]\ntype = \"stdout\"\ninputs = [\"having\"]\n"
    );
    let p = plan(&text).unwrap();
    assert_eq!(p.sinks[0].name, "busy");
    let having = p.steps.iter().position(|s| s.name == "having").unwrap();
    assert_eq!(
        p.sinks[0].inputs,
        vec![Edge {
            from: StreamRef::Node(0),
            steps: vec![having]
        }]
    );
    let e = plan(&text.replace("n >= 2", "count >= 2")).unwrap_err();
    assert!(
        e.contains("reads field `count`") && e.contains("window_start"),
        "{e}"
    );
    let e = plan(&with("inputs = [\"orders\"]", "inputs = [\"big\"]")).unwrap_err();
    assert!(e.contains("transforms form a cycle"), "{e}");
}

#[test]
fn the_contract_pipeline_builds_into_four_depths() {
    let p = crate::plan::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("config/ad_spend.toml"))
        .unwrap();
    let order: Vec<(&str, usize)> = p.nodes.iter().map(|n| (n.name.as_str(), n.depth)).collect();
    assert_eq!(
        order,
        [
            ("unique_clicks", 0),
            ("matched", 1),
            ("priced", 2),
            ("spend_per_minute", 3)
        ]
    );
    let m = node(&p, "matched");
    let sides: Vec<(&str, StreamRef)> = p
        .ports_of(m)
        .iter()
        .map(|port| (port.name, port.inputs[0].from))
        .collect();
    // Sources by name: ad_prices 0, clicks 1, impressions 2.
    assert_eq!(
        sides,
        [
            ("left", StreamRef::Source(2)),
            ("right", StreamRef::Node(0))
        ]
    );
    assert!(
        p.ports_of(m).iter().all(|port| port.row),
        "joins hold rows by value"
    );
    // The temporal join reads the select over the interval join's output.
    let t = node(&p, "priced");
    assert_eq!(p.ports_of(t)[0].inputs[0].from, StreamRef::Node(m));
    assert_eq!(p.ports_of(t)[0].inputs[0].steps.len(), 1);
    let w = node(&p, "spend_per_minute");
    assert_eq!(p.ports_of(w)[0].values[0].0.as_str(), "table.price");
    assert!(
        p.nodes.iter().all(|n| n.hold_ms == 0),
        "an inner join holds nothing back"
    );
}

/// Three sources and a join, for the refusals below.
const JOINS: &str = r#"[sources.imps]
type = "file"
path = "i"
event_time = { field = "ts" }

[sources.clicks]
type = "file"
path = "c"
event_time = { field = "ts" }

[transforms.cpm]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "1m" }
allowed_lateness = "0s"
aggregates = { n = "count()", top = "max(bid)" }

[transforms.m]
type = "interval_join"
left = "imps"
right = "clicks"
on = ["imp_id"]
between = ["-5s", "10s"]
kind = "full"

[sinks.o]
type = "stdout"
inputs = ["m", "cpm"]
"#;

#[test]
fn outer_joins_hold_their_watermark_back_by_their_bounds() {
    let p = plan(JOINS).unwrap();
    assert_eq!(p.nodes[node(&p, "m")].hold_ms, 10_000);
    let p = plan(&JOINS.replace("kind = \"full\"", "kind = \"right\"")).unwrap();
    assert_eq!(
        p.nodes[node(&p, "m")].hold_ms,
        5_000,
        "right rows leave at tr - lower"
    );
    let p = plan(&JOINS.replace("kind = \"full\"", "kind = \"inner\"")).unwrap();
    assert_eq!(p.nodes[node(&p, "m")].hold_ms, 0);
}

#[test]
fn joins_over_windows_and_joins_check_their_key_against_the_output() {
    let text = JOINS
        .replace("left = \"imps\"", "left = \"cpm\"")
        .replace("on = [\"imp_id\"]", "on = [\"ad_id\"]");
    let p = plan(&text).unwrap();
    assert_eq!(p.nodes[node(&p, "m")].depth, 1);
    let e = plan(&JOINS.replace("left = \"imps\"", "left = \"cpm\"")).unwrap_err();
    assert!(
        e.contains("transforms.m.on[0]")
            && e.contains("field `imp_id` is not produced by window `cpm`"),
        "{e}"
    );
    // A select over the join reads `left.` and `right.` fields, checked where known.
    let sel = format!("{text}\n[transforms.s]\ntype = \"select\"\ninputs = [\"m\"]\nfields = {{ a = \"left.ad_id\", b = \"left.nope\" }}\n\n[sinks.s_out]\ntype = \"stdout\"\ninputs = [\"s\"]\n");
    let e = plan(&sel).unwrap_err();
    assert!(
        e.contains("reads field `left.nope`") && e.contains("under `left`"),
        "{e}"
    );
}

#[test]
fn updating_streams_reach_only_what_can_take_retractions() {
    let updating = JOINS.replace("allowed_lateness = \"0s\"", "allowed_lateness = \"1m\"");
    // A join over a re-firing window is refused...
    let text = updating
        .replace("left = \"imps\"", "left = \"cpm\"")
        .replace("on = [\"imp_id\"]", "on = [\"ad_id\"]");
    let e = plan(&text).unwrap_err();
    assert!(
        e.contains("transforms.m.left") && e.contains("needs an append-only input"),
        "{e}"
    );
    // ...a roll-up summing it is fine, one taking its maximum is not.
    let rollup = format!("{updating}\n[transforms.hourly]\ntype = \"window\"\ninputs = [\"cpm\"]\ngroup_by = [\"ad_id\"]\nwindow = {{ type = \"tumbling\", size = \"1h\" }}\naggregates = {{ n = \"sum(n)\" }}\n");
    let p = plan(&rollup).unwrap();
    assert!(p.nodes[node(&p, "cpm")].updates);
    let e = plan(&rollup.replace("sum(n)", "max(top)")).unwrap_err();
    assert!(
        e.contains("transforms.hourly.aggregates.n") && e.contains("cannot take a value back"),
        "{e}"
    );
}

#[test]
fn paths_are_nested_fields_and_indexes_are_refused_in_keys() {
    let p =
        plan(&JOINS.replace("group_by = [\"ad_id\"]", "group_by = [\"user.country\"]")).unwrap();
    let NodeKind::Window(w) = &p.nodes[node(&p, "cpm")].kind else {
        panic!()
    };
    assert_eq!(w.group_by[0].segments().len(), 2);
    let e =
        plan(&JOINS.replace("group_by = [\"ad_id\"]", "group_by = [\"items[0]\"]")).unwrap_err();
    assert!(e.contains("array indexes are not supported here"), "{e}");
}

#[test]
fn hot_keys_need_a_window_that_reads_sources() {
    let text = format!("{JOINS}\n[transforms.roll]\ntype = \"window\"\ninputs = [\"cpm\"]\ngroup_by = [\"ad_id\"]\nwindow = {{ type = \"tumbling\", size = \"1h\" }}\naggregates = {{ n = \"sum(n)\" }}\nhot_keys = {{ mode = \"salt\" }}\n");
    let e = plan(&text).unwrap_err();
    assert!(
        e.contains("transforms.roll.hot_keys") && e.contains("reads another operator's output"),
        "{e}"
    );
}

#[test]
fn a_regular_join_with_a_ttl_is_the_interval_join_of_plus_minus_its_ttl() {
    let regular = JOINS
        .replace("type = \"interval_join\"", "type = \"join\"")
        .replace(
            "between = [\"-5s\", \"10s\"]\nkind = \"full\"",
            "ttl = \"1m\"",
        );
    let p = plan(&regular).unwrap();
    let NodeKind::IntervalJoin(j) = &p.nodes[node(&p, "m")].kind else {
        panic!("not a join");
    };
    assert_eq!(
        (j.lower_ms, j.upper_ms, j.outer),
        (-60_000, 60_000, [false; 2])
    );
    assert_eq!(p.nodes[node(&p, "m")].hold_ms, 0, "pairs are never late");
    let e = plan(&regular.replace("ttl = \"1m\"", "ttl = \"0s\"")).unwrap_err();
    assert!(
        e.contains("transforms.m.ttl") && e.contains("ttl must be positive"),
        "{e}"
    );
    // An outer kind pads a row once its ttl passes unmatched: the interval join's outer kinds.
    let left = plan(&regular.replace("ttl = \"1m\"", "ttl = \"1m\"\nkind = \"left\"")).unwrap();
    let NodeKind::IntervalJoin(j) = &left.nodes[node(&left, "m")].kind else {
        panic!("not a join");
    };
    assert_eq!(
        (j.lower_ms, j.upper_ms, j.outer),
        (-60_000, 60_000, [true, false])
    );
    let e = plan(&regular.replace("ttl = \"1m\"", "between = [\"0s\", \"1s\"]")).unwrap_err();
    assert!(e.contains("between"), "{e}");
    // Without a ttl: the join that keeps its rows, of any kind; outer ones update.
    for (kind, outer) in [
        ("inner", [false, false]),
        ("left", [true, false]),
        ("full", [true, true]),
    ] {
        let text = regular
            .replace("ttl = \"1m\"", &format!("kind = \"{kind}\""))
            .replace(
                "type = \"stdout\"",
                "type = \"stdout\"\nchangelog = \"print\"",
            );
        let p = plan(&text).unwrap();
        let n = &p.nodes[node(&p, "m")];
        let NodeKind::RegularJoin(j) = &n.kind else {
            panic!("not a regular join");
        };
        assert_eq!(j.outer, outer, "{kind}");
        assert_eq!(n.changelog, kind != "inner", "{kind}");
    }
}
