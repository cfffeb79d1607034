//! Updating results in the plan: a group aggregate's output reaches only sinks that take a
//! changelog, no event-time operator, and another group aggregate only through aggregates that
//! can take a value back; `explain` shows each operator's output mode and each sink's encoding;
//! a Debezium Kafka source needs the value format its envelope is in.

use super::{build_text, errors};

/// A file source without event time, a group aggregate `per_ad` over it, and `rest` after.
fn job(rest: &str) -> String {
    format!(
        r#"[sources.clicks]
type = "file"
path = "clicks.ndjson"

[transforms.per_ad]
type = "group_aggregate"
inputs = ["clicks"]
group_by = ["ad_id"]
aggregates = {{ n = "count()", spend = "sum(bid)", top = "max(bid)" }}

{rest}"#
    )
}

const FILE_SINK: &str =
    "[sinks.out]\ntype = \"file\"\npath = \"out.ndjson\"\ninputs = [\"per_ad\"]\n";

#[test]
fn an_updating_result_reaches_only_sinks_that_take_a_changelog() {
    assert_eq!(errors(&job(FILE_SINK)), ["p.toml:14:1: sinks.out.inputs: `per_ad` is an updating result (+I, -U, +U, -D rows, as a GROUP BY without a window or an outer join gives), but this file sink writes appends only (as Flink's, it cannot consume update changes): set changelog = \"debezium-json\" on it (in SQL, 'format' = 'debezium-json'), or write to a print sink"]);
    let debezium = format!("{FILE_SINK}changelog = \"debezium-json\"\n");
    let plan = build_text(&job(&debezium)).unwrap_or_else(|e| panic!("{e}"));
    let explained = crate::plan::explain::explain(&plan);
    assert!(
        explained.contains("    emits: updating (+I, -U, +U, -D)\n"),
        "{explained}"
    );
    assert!(
        explained.contains(
            "    writes: changelog as debezium-json; delivery: best effort (no checkpoints)\n"
        ),
        "{explained}"
    );
    let print = "[sinks.out]\ntype = \"stdout\"\ninputs = [\"per_ad\"]\nchangelog = \"print\"\n";
    build_text(&job(print)).unwrap_or_else(|e| panic!("{e}"));
    // A file does not print.
    let printed_file = format!("{FILE_SINK}changelog = \"print\"\n");
    assert_eq!(errors(&job(&printed_file)), ["p.toml:15:1: sinks.out.changelog: a file sink cannot write changelog = \"print\" (it takes \"append\", \"debezium-json\")"]);
}

#[test]
fn an_event_time_operator_refuses_an_updating_result() {
    let window = r#"[transforms.cpm]
type = "window"
inputs = ["per_ad"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "1m" }
aggregates = { n = "count()" }

[sinks.out]
type = "stdout"
inputs = ["cpm"]
"#;
    assert_eq!(errors(&job(window)), ["p.toml:11:13: transforms.cpm: window works in event time, but it reads the result of group aggregate `per_ad`, which has no event time (a GROUP BY without a window and a regular join give rows without a time attribute, as in Flink)"]);
}

#[test]
fn a_group_aggregate_over_an_updating_result_takes_values_back() {
    let over = |aggs: &str| {
        format!(
            r#"[transforms.total]
type = "group_aggregate"
inputs = ["per_ad"]
group_by = []
aggregates = {aggs}

[sinks.out]
type = "stdout"
inputs = ["total"]
changelog = "print"
"#
        )
    };
    let p = build_text(&job(&over(
        "{ ads = \"count()\", spend = \"sum(spend)\", avg = \"avg(n)\", best = \"max(top)\", least = \"min(n)\" }",
    )))
    .unwrap_or_else(|e| panic!("{e}"));
    let total = p.nodes.iter().find(|n| n.name == "total").expect("total");
    let crate::operators::NodeKind::GroupAggregate(g) = &total.kind else {
        panic!("not a group aggregate");
    };
    assert!(
        g.retracts,
        "MIN and MAX over an updating input keep their values"
    );
    // An exact distinct count keeps each value's rows; a sketch cannot take a value back.
    assert!(build_text(&job(&over("{ users = \"count_distinct(n)\" }"))).is_ok());
    assert_eq!(errors(&job(&over("{ users = \"approx_count_distinct(n)\" }"))), ["p.toml:15:16: transforms.total.aggregates.users: `approx_count_distinct(n)` over an updating input: an approximate distinct count (a HyperLogLog sketch) cannot take a value back; use count_distinct (exact, which keeps each value's row count) here, or aggregate an append-only input"]);
}

#[test]
fn a_debezium_kafka_source_names_the_format_its_envelope_needs() {
    let job = |changelog: &str, format: &str| {
        format!(
            r#"[sources.c]
type = "kafka"
brokers = "127.0.0.1:9092"
topic = "cdc"
changelog = "{changelog}"
{format}
[transforms.f]
type = "filter"
inputs = ["c"]
where = "id > 3"

[sinks.out]
type = "stdout"
inputs = ["f"]
changelog = "print"
"#
        )
    };
    let avro = "format = \"avro\"\nschema_registry = { url = \"http://127.0.0.1:8081\" }\n";
    let e = errors(&job("debezium-avro", ""));
    let want = "sources.c.changelog: changelog = \"debezium-avro\" reads Avro values";
    assert!(e.len() == 1 && e[0].contains(want), "{e:?}");
    let e = errors(&job("debezium-json", avro));
    let want = "sources.c.changelog: changelog = \"debezium-json\" reads JSON values";
    assert!(e.len() == 1 && e[0].contains(want), "{e:?}");
    let plan = build_text(&job("debezium-avro", avro)).unwrap_or_else(|e| panic!("{e}"));
    let explained = crate::plan::explain::explain(&plan);
    let source = "c: kafka cdc at 127.0.0.1:9092 (Debezium Avro changes: updating)";
    assert!(explained.contains(source), "{explained}");
}

/// A Debezium file source `prices` with event time and an append-only `orders`, and `rest`.
fn cdc(rest: &str) -> String {
    format!(
        r#"[sources.prices]
type = "file"
path = "prices.ndjson"
changelog = "debezium-json"
event_time = {{ field = "ts", unit = "ms" }}

[sources.orders]
type = "file"
path = "orders.ndjson"
event_time = {{ field = "ts", unit = "ms" }}

{rest}[sinks.out]
type = "stdout"
inputs = ["priced"]
changelog = "print"
"#
    )
}

#[test]
fn a_changelog_source_is_a_temporal_joins_versioned_table_but_not_its_input() {
    let join = |input: &str, table: &str| {
        cdc(&format!(
            "[transforms.priced]\ntype = \"temporal_join\"\ninput = \"{input}\"\ntable = \"{table}\"\non = {{ input = \"ad\", table = \"ad\" }}\n\n"
        ))
    };
    let plan = build_text(&join("orders", "prices")).unwrap_or_else(|e| panic!("{e}"));
    let explained = crate::plan::explain::explain(&plan);
    assert!(
        explained.contains("table keyed on ad <- prices")
            && explained.contains("emits: insert-only (+I)"),
        "{explained}"
    );
    let errs = errors(&join("prices", "orders"));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains(
            "transforms.priced: temporal join takes appends only, but `prices` is a changelog"
        ),
        "{errs:?}"
    );
}

#[test]
fn a_regular_joins_condition_is_checked_before_anything_runs() {
    let join = |condition: &str, ttl: &str| {
        cdc(&format!(
            "[transforms.priced]\ntype = \"join\"\nleft = \"orders\"\nright = \"prices\"\non = [\"ad\"]\nkind = \"left\"\ncondition = \"{condition}\"\n{ttl}\n"
        ))
    };
    let plan = build_text(&join("right.ts <= left.ts", "")).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        crate::plan::explain::explain(&plan)
            .contains("regular join (left outer) on ad where right.ts <= left.ts"),
        "{}",
        crate::plan::explain::explain(&plan)
    );
    let errs = errors(&join("middle.ts <= left.ts", ""));
    assert!(
        errs.len() == 1
            && errs[0].contains(
                "transforms.priced.condition: `middle.ts <= left.ts` reads field `middle.ts`"
            ),
        "{errs:?}"
    );
    // The message, then the expression with a caret under the column.
    let errs = errors(&join("right.ts <= <= 1", ""));
    assert!(
        errs[0].contains("transforms.priced.condition: invalid expression")
            && errs[2].trim() == "^",
        "{errs:?}"
    );
    let errs = errors(&join("right.ts <= left.ts", "ttl = \"1h\"\n"));
    assert!(
        errs.iter().any(|e| e.contains(
            "transforms.priced.condition: a condition applies to a regular join without a ttl"
        )),
        "{errs:?}"
    );
}

#[test]
fn hot_keys_combine_a_group_aggregate_of_append_only_source_rows_only() {
    let hot = |input: &str, aggs: &str| {
        format!(
            r#"[transforms.total]
type = "group_aggregate"
inputs = ["{input}"]
group_by = ["ad_id"]
aggregates = {aggs}
hot_keys = {{ mode = "auto", threshold = 0.1 }}

[sinks.out]
type = "stdout"
inputs = ["total"]
changelog = "print"
"#
        )
    };
    let p = build_text(&job(&hot(
        "clicks",
        "{ n = \"count()\", u = \"count_distinct(user_id)\" }",
    )))
    .unwrap_or_else(|e| panic!("{e}"));
    let total = p.nodes.iter().find(|n| n.name == "total").expect("total");
    assert!(
        crate::operators::combiner(total).is_some(),
        "phase one offered"
    );
    // Over another aggregate's updating result: neither read where records are read nor
    // append-only.
    let errs = errors(&job(&hot("per_ad", "{ n = \"count()\" }")));
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0].contains("transforms.total.hot_keys.mode: hot_keys applies to group aggregates that read sources"), "{errs:?}");
    assert!(
        errs[1].contains("hot_keys needs an append-only input"),
        "{errs:?}"
    );
    let errs = errors(&job(&hot("clicks", "{ f = \"first_value(bid)\" }")));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("hot_keys cannot combine first_value"),
        "{errs:?}"
    );
    let bad =
        job(&hot("clicks", "{ n = \"count()\" }")).replace("threshold = 0.1", "threshold = 2.0");
    assert!(
        errors(&bad)[0].contains("2 is not a share of events"),
        "{:?}",
        errors(&bad)
    );
}
