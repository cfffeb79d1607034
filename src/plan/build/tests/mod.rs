//! Plan validation tests: the shipped configs build, the issue's example builds to exactly the
//! plan written out by hand here, and each class of problem is reported at its file:line:col and
//! key, all of them at once.

use super::*;
use crate::config::parse;
use crate::connectors::file::{FileSink, FileSource};
use crate::connectors::generator::ClickSource;
use crate::connectors::parquet::ParquetSinkPlan;
use crate::expr::FieldPath;
use crate::plan::{
    AggFunc, AggPlan, Edge, EventTimePlan, NodeKind, PortPlan, SinkPlan, SlotUse, StreamRef,
    TimeUnit, WatermarkPlan, WindowKind, WindowPlan,
};

mod changelog;
mod graph;
mod untimed;

/// Line numbers in the tests below refer to this text.
const BASE: &str = r#"[sources.clicks]
type = "generator"

[transforms.cpm]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = { type = "tumbling", size = "1m" }
aggregates = { clicks = "count()" }

[sinks.out]
type = "stdout"
inputs = ["cpm"]
"#;

fn build_text(text: &str) -> Result<Plan, PlanErrors> {
    let (config, src) =
        parse(text, "p.toml").unwrap_or_else(|e| panic!("parse failed: {e}\n{text}"));
    build(&config, &src)
}

fn edited(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "BASE has no {from:?}");
    BASE.replacen(from, to, 1)
}

/// The errors of `text`, one display line each.
fn errors(text: &str) -> Vec<String> {
    match build_text(text) {
        Ok(plan) => panic!("built, but should not have: {plan:?}\n{text}"),
        Err(e) => e.to_string().lines().map(str::to_string).collect(),
    }
}

/// The single error of `text`.
fn error(text: &str) -> String {
    let errs = errors(text);
    assert_eq!(errs.len(), 1, "expected one error, got {errs:#?}");
    errs[0].clone()
}

#[test]
fn every_shipped_config_parses_and_builds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("config");
    let mut built = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            if let Err(e) = load(&path) {
                panic!("{} does not build:\n{e}", path.display());
            }
            built += 1;
        }
    }
    assert!(
        built >= 3,
        "only {built} configs found in {}",
        dir.display()
    );
}

#[test]
fn the_issue_example_builds_to_exactly_this_plan() {
    let plan = load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("config/example.toml")).unwrap();
    let p = |s: &str| FieldPath::parse(s).unwrap();
    let agg = |name: &str, func, field: Option<&str>, slot| AggPlan {
        name: name.into(),
        func,
        field: field.map(p),
        slot,
    };
    assert_eq!(
        plan.runtime,
        RuntimePlan {
            shards: 2,
            key_groups: 720,
            ring_capacity: 8192,
            chunk_bytes: 1 << 20,
            pin_cores: true,
            max_line_bytes: 1 << 20,
            drain_timeout_ms: 60_000,
        }
    );
    assert_eq!(plan.sources.len(), 1);
    let s = &plan.sources[0];
    assert_eq!(s.name, "clicks");
    assert_eq!(
        s.source_as::<FileSource>(),
        Some(&FileSource {
            path: "data/clicks.ndjson".into(),
            csv: None,
            rate_per_s: None,
            start_offset: 0,
            start_ms: None,
            changelog: false,
        })
    );
    assert_eq!(
        s.event_time,
        Some(EventTimePlan {
            field: "ts".into(),
            unit: TimeUnit::Millis,
            max_future_ms: 3_600_000,
            allow_negative: false,
        })
    );
    assert_eq!(
        s.watermark,
        WatermarkPlan {
            max_out_of_orderness_ms: 5_000,
            idle_timeout_ms: 30_000,
            max_drift_ms: None,
        }
    );
    assert_eq!(plan.nodes.len(), 1);
    let n = &plan.nodes[0];
    assert_eq!(
        (
            n.name.as_str(),
            n.depth,
            n.hold_ms,
            n.updates,
            n.ports.clone()
        ),
        ("clicks_per_minute", 0, 0, true, 0..1)
    );
    assert_eq!(n.late_events.as_deref(), Some("late_clicks"));
    assert_eq!(
        n.kind,
        NodeKind::Window(WindowPlan {
            group_by: vec![p("ad_id")],
            window: WindowKind::Tumbling { size_ms: 60_000 },
            allowed_lateness_ms: 60_000,
            aggregates: vec![
                agg("clicks", AggFunc::Count, None, None),
                agg("spend", AggFunc::Sum, Some("bid"), Some(0)),
                agg("top_bid", AggFunc::Max, Some("bid"), Some(0)),
                agg("users", AggFunc::CountDistinct, Some("user_id"), Some(1)),
            ],
            hot_keys: crate::plan::HotKeysPlan::OFF,
        })
    );
    let source = |id| Edge {
        from: StreamRef::Source(id),
        steps: vec![],
    };
    assert_eq!(
        plan.ports,
        vec![PortPlan {
            node: 0,
            side: 0,
            name: "inputs",
            key: vec![p("ad_id")],
            values: vec![(p("bid"), SlotUse::Number), (p("user_id"), SlotUse::Hash)],
            row: false,
            inputs: vec![source(0)],
        }]
    );
    assert!(plan.steps.is_empty());
    let edge = |from| Edge {
        from,
        steps: vec![],
    };
    // Sorted by name: "counts" < "late".
    let sinks: Vec<_> = plan
        .sinks
        .iter()
        .map(|s: &SinkPlan| (s.name.as_str(), s.sink_as::<FileSink>(), &s.inputs[..]))
        .collect();
    let file = |path: &str| FileSink {
        path: path.into(),
        changelog: crate::record::changelog::ChangelogEncoding::Append,
    };
    let (counts, late) = (
        file("out/clicks_per_minute.ndjson"),
        file("out/late_clicks.ndjson"),
    );
    assert_eq!(
        sinks,
        vec![
            ("counts", Some(&counts), &[edge(StreamRef::Node(0))][..]),
            ("late", Some(&late), &[edge(StreamRef::Late(0))][..]),
        ]
    );
    assert_eq!(
        plan.dead_letter.as_ref().map(|d| &d.path),
        Some(&"out/dead_letter.ndjson".into())
    );
    assert_eq!((plan.checkpoint.clone(), plan.api), (None, None));
}

/// The window plan of node `i`.
fn window(plan: &Plan, i: usize) -> &WindowPlan {
    match &plan.nodes[i].kind {
        NodeKind::Window(w) => w,
        k => panic!("node {i} is a {}", k.what()),
    }
}

#[test]
fn quickstart_is_bounded_and_exercises_the_late_path() {
    let plan = load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("config/quickstart.toml")).unwrap();
    let Some(g) = plan.sources[0].source_as::<ClickSource>().map(|g| &g.model) else {
        panic!("{plan:?}")
    };
    assert_eq!((g.count, g.keys), (Some(20_000_000), 100_000));
    assert_eq!((g.late_fraction, g.late_by_ms), (0.001, 120_000));
    // Late by more than out-of-orderness + lateness, so some events do reach the side output.
    let w = window(&plan, 0);
    assert!(
        g.late_by_ms > plan.sources[0].watermark.max_out_of_orderness_ms + w.allowed_lateness_ms
    );
    assert_eq!(plan.nodes[0].late_events.as_deref(), Some("late_clicks"));
    assert_eq!(
        plan.sinks
            .iter()
            .map(|s| s.inputs[0].from)
            .collect::<Vec<_>>(),
        [StreamRef::Node(0), StreamRef::Late(0)]
    );
}

#[test]
fn example_runs_unchanged_on_a_bare_generator() {
    let example = include_str!("../../../../config/example.toml");
    let from = example.find("[sources.clicks]").unwrap();
    let to = example.find("[transforms.").unwrap();
    let text = format!(
        "{}[sources.clicks]\ntype = \"generator\"\n\n{}",
        &example[..from],
        &example[to..]
    );
    let plan = build_text(&text).unwrap();
    let s = &plan.sources[0];
    let g = s.source_as::<ClickSource>().map(|g| &g.model);
    assert!(matches!(g, Some(g) if g.count.is_none() && g.seed == 42));
    assert_eq!(
        s.event_time,
        Some(EventTimePlan {
            field: "ts".into(),
            unit: TimeUnit::Millis,
            max_future_ms: 3_600_000,
            allow_negative: false,
        })
    );
    assert_eq!(s.watermark.max_out_of_orderness_ms, 5_000);
}

#[test]
fn several_sources_union_and_ids_follow_name_order() {
    let text = edited("inputs = [\"clicks\"]", "inputs = [\"views\", \"clicks\"]")
        + "\n[sources.views]\ntype = \"generator\"\nseed = 7\n\n[sources.a_first]\ntype = \"generator\"\n";
    let plan = build_text(&text).unwrap();
    let names: Vec<&str> = plan.sources.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a_first", "clicks", "views"]);
    let froms: Vec<StreamRef> = plan.ports[0].inputs.iter().map(|e| e.from).collect();
    assert_eq!(froms, [StreamRef::Source(2), StreamRef::Source(1)]);
}

#[test]
fn empty_group_by_and_an_unread_late_stream_are_fine() {
    let text = edited(
        "group_by = [\"ad_id\"]",
        "group_by = []\nlate_events = \"nobody_reads_this\"",
    );
    let plan = build_text(&text).unwrap();
    assert!(window(&plan, 0).group_by.is_empty());
    assert!(plan.dead_letter.is_none());
}

#[test]
fn unknown_inputs_are_reported_with_a_suggestion() {
    let errs = errors(
        &edited("inputs = [\"clicks\"]", "inputs = [\"clics\"]").replacen(
            "[\"cpm\"]",
            "[\"cmp\"]",
            1,
        ),
    );
    assert_eq!(errs, [
        "p.toml:6:11: transforms.cpm.inputs[0]: unknown input `clics`: no source, transform or late_events output has this name; did you mean `clicks`?",
        "p.toml:13:11: sinks.out.inputs[0]: unknown input `cmp`: no source, transform or late_events output has this name; did you mean `cpm`?",
    ]);
}

#[test]
fn cycles_are_reported_with_their_path() {
    let text = edited("inputs = [\"clicks\"]", "inputs = [\"clicks\", \"b\"]")
        + "\n[transforms.b]\ntype = \"window\"\ninputs = [\"cpm\"]\ngroup_by = []\nwindow = { type = \"session\", gap = \"5s\" }\naggregates = { n = \"count()\" }\n";
    assert_eq!(error(&text), "p.toml:17:11: transforms.b.inputs[0]: transforms form a cycle: b -> cpm -> b (each reads the next); a pipeline must be acyclic");
    let own = edited(
        "inputs = [\"clicks\"]",
        "inputs = [\"own_late\"]\nlate_events = \"own_late\"",
    );
    assert_eq!(error(&own), "p.toml:6:11: transforms.cpm.inputs[0]: transforms form a cycle: cpm -> cpm (each reads the next); a pipeline must be acyclic");
}

#[test]
fn windows_over_windows_and_late_streams_are_deeper_nodes() {
    let text = edited("group_by = [\"ad_id\"]", "group_by = [\"ad_id\"]\nlate_events = \"late\"")
        + "\n[transforms.hourly]\ntype = \"window\"\ninputs = [\"cpm\", \"late\"]\ngroup_by = [\"ad_id\"]\nwindow = { type = \"tumbling\", size = \"1h\" }\naggregates = { n = \"count()\" }\n";
    let plan = build_text(&text).unwrap();
    let names: Vec<(&str, usize)> = plan
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.depth))
        .collect();
    assert_eq!(
        names,
        [("cpm", 0), ("hourly", 1)],
        "topological, then by name"
    );
    let froms: Vec<StreamRef> = plan.ports[1].inputs.iter().map(|e| e.from).collect();
    assert_eq!(froms, [StreamRef::Node(0), StreamRef::Late(0)]);
    assert_eq!(plan.depths(), 2);
    // The hourly window reads the per-minute results' fields, and the late clicks': a field
    // either lacks is refused, naming which.
    let e = errors(&text.replace("{ n = \"count()\" }", "{ n = \"sum(clicks)\" }"));
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(
        e[0].contains("transforms.hourly.aggregates.n")
            && e[0].contains("field `clicks` is not produced by the late records"),
        "{}",
        e[0]
    );
    let e = error(
        &text
            .replace("inputs = [\"cpm\", \"late\"]", "inputs = [\"cpm\"]")
            .replace("{ n = \"count()\" }", "{ n = \"sum(click)\" }"),
    );
    assert!(
        e.contains("field `click` is not produced by window `cpm`")
            && e.contains("did you mean `clicks`"),
        "{e}"
    );
}

#[test]
fn sinks_read_any_stream_but_not_sinks() {
    let errs = errors(&edited(
        "inputs = [\"cpm\"]",
        "inputs = [\"cpm\", \"clicks\", \"out\", \"cpm\"]",
    ));
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(
        errs[0].starts_with("p.toml:13:28: sinks.out.inputs[2]: `out` is a sink, not a stream"),
        "{}",
        errs[0]
    );
    assert_eq!(
        errs[1],
        "p.toml:13:35: sinks.out.inputs[3]: `cpm` is listed twice"
    );
    let plan = build_text(&edited(
        "inputs = [\"cpm\"]",
        "inputs = [\"cpm\", \"clicks\"]",
    ))
    .unwrap();
    assert_eq!(
        plan.sinks[0].inputs[1].from,
        StreamRef::Source(0),
        "a source as it is"
    );
}

#[test]
fn aggregate_functions_and_arity() {
    let with = |aggs: &str| errors(&edited("{ clicks = \"count()\" }", aggs));
    let e = with("{ clicks = \"cnt()\" }");
    assert_eq!(e, ["p.toml:9:16: transforms.cpm.aggregates.clicks: unknown aggregate function `cnt` in `cnt()`; known functions: count(), count(field), sum(field), min(field), max(field), avg(field), count_distinct(field), approx_count_distinct(field); did you mean `count`?"]);
    let e =
        with("{ a = \"count(bid, ts)\", b = \"sum()\", c = \"sum(bid, ts)\", d = \"sum bid\" }");
    assert_eq!(e, [
        "p.toml:9:16: transforms.cpm.aggregates.a: `count` takes no field or one in `count(bid, ts)`",
        "p.toml:9:38: transforms.cpm.aggregates.b: `sum` needs a field: write `sum(field)`",
        "p.toml:9:51: transforms.cpm.aggregates.c: `sum` takes exactly one field in `sum(bid, ts)`",
        "p.toml:9:71: transforms.cpm.aggregates.d: `sum bid` is not an aggregate: expected `function(field)` such as `sum(bid)`, or `count()`",
    ]);
    assert_eq!(with("{}"), ["p.toml:9:1: transforms.cpm.aggregates: at least one aggregate is needed, e.g. { clicks = \"count()\" }"]);
}

#[test]
fn parse_aggregate_table() {
    use crate::operators::window::plan::parse_aggregate;
    let ok: &[(&str, AggFunc, Option<&str>)] = &[
        ("count()", AggFunc::Count, None),
        (" count( ) ", AggFunc::Count, None),
        ("count(bid)", AggFunc::Count, Some("bid")),
        ("sum(bid)", AggFunc::Sum, Some("bid")),
        ("min( ts )", AggFunc::Min, Some("ts")),
        ("max(bid)", AggFunc::Max, Some("bid")),
        ("avg(bid)", AggFunc::Avg, Some("bid")),
        (
            "count_distinct(user_id)",
            AggFunc::CountDistinct,
            Some("user_id"),
        ),
    ];
    for &(expr, func, field) in ok {
        assert_eq!(
            parse_aggregate(expr),
            Ok((func, field.map(str::to_string))),
            "{expr}"
        );
    }
    for bad in [
        "",
        "count",
        "count(",
        "sum)bid(",
        "Sum(bid)",
        "sum(a b)",
        "sum((bid))",
        "median(bid)",
    ] {
        assert!(parse_aggregate(bad).is_err(), "{bad}");
    }
}

#[test]
fn any_number_of_value_fields_and_no_name_collisions() {
    let aggs = "{ a = \"sum(f1)\", b = \"max(f2)\", c = \"min(f3)\", d = \"avg(f4)\", e = \"sum(f5)\", f = \"max(f1)\", g = \"sum(user.spend)\", h = \"count_distinct(f6)\" }";
    let text = edited(
        "type = \"generator\"",
        "type = \"file\"\npath = \"x.ndjson\"\nevent_time = { field = \"ts\" }",
    )
    .replacen("{ clicks = \"count()\" }", aggs, 1);
    let plan = build_text(&text).unwrap();
    let fields: Vec<&str> = plan.ports[0]
        .values
        .iter()
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(fields, ["f1", "f2", "f3", "f4", "f5", "user.spend", "f6"]);
    let slots: Vec<Option<usize>> = window(&plan, 0).aggregates.iter().map(|a| a.slot).collect();
    assert_eq!(
        slots,
        [
            Some(0),
            Some(1),
            Some(2),
            Some(3),
            Some(4),
            Some(0),
            Some(5),
            Some(6)
        ]
    );
    let errs = errors(
        &edited(
            "{ clicks = \"count()\" }",
            "{ ad_id = \"count()\", window_end = \"max(bid)\" }",
        )
        .replacen("[\"ad_id\"]", "[\"ad_id\", \"ad_id\", \"window_start\"]", 1),
    );
    assert_eq!(errs.len(), 4, "{errs:#?}");
    assert_eq!(
        errs[0],
        "p.toml:7:22: transforms.cpm.group_by[1]: `ad_id` is listed twice"
    );
    assert!(errs[1].starts_with("p.toml:7:31: transforms.cpm.group_by[2]: `window_start` is a field every window result has"), "{}", errs[1]);
    assert!(
        errs[2].starts_with(
            "p.toml:9:16: transforms.cpm.aggregates.ad_id: aggregate name `ad_id` collides"
        ),
        "{}",
        errs[2]
    );
    assert!(errs[3].starts_with("p.toml:9:35: transforms.cpm.aggregates.window_end: aggregate name `window_end` collides"), "{}", errs[3]);
}

#[test]
fn generator_sources_have_four_fields() {
    let errs =
        errors(&edited("[\"ad_id\"]", "[\"ad\"]").replacen("\"count()\"", "\"max(price)\"", 1));
    assert_eq!(errs, [
        "p.toml:7:13: transforms.cpm.group_by[0]: field `ad` is not produced by generator source `clicks`: it has no field `ad` (it has `ad_id`, `user_id`, `ts`, `bid`)",
        "p.toml:9:16: transforms.cpm.aggregates.clicks: field `price` is not produced by generator source `clicks`: it has no field `price` (it has `ad_id`, `user_id`, `ts`, `bid`)",
    ]);
}

#[test]
fn window_shapes() {
    let with = |w: &str| errors(&edited("{ type = \"tumbling\", size = \"1m\" }", w));
    assert_eq!(
        with("{ type = \"tumbling\", size = \"0s\" }"),
        ["p.toml:8:31: transforms.cpm.window.size: must be longer than 0s"]
    );
    assert_eq!(
        with("{ type = \"session\", gap = \"0ms\" }"),
        ["p.toml:8:30: transforms.cpm.window.gap: must be longer than 0s"]
    );
    assert_eq!(with("{ type = \"sliding\", size = \"1m\", slide = \"2m\" }"), ["p.toml:8:43: transforms.cpm.window.slide: slide 2m is longer than size 1m: events between windows would be dropped; slide must be <= size"]);
    assert_eq!(with("{ type = \"sliding\", size = \"1m\", slide = \"7s\" }"), ["p.toml:8:43: transforms.cpm.window.slide: size 1m is not a whole multiple of slide 7s: size % slide must be 0"]);
    assert_eq!(with("{ type = \"cumulative\", step = \"7s\", max_size = \"1m\" }"), ["p.toml:8:46: transforms.cpm.window.max_size: max_size 1m is not a whole multiple of step 7s: max_size % step must be 0"]);
    let ok = |w: &str| {
        window(
            &build_text(&edited("{ type = \"tumbling\", size = \"1m\" }", w)).unwrap(),
            0,
        )
        .window
    };
    assert_eq!(
        ok("{ type = \"sliding\", size = \"1m\", slide = \"1m\" }"),
        WindowKind::Sliding {
            size_ms: 60_000,
            slide_ms: 60_000
        }
    );
    assert_eq!(
        ok("{ type = \"cumulative\", step = \"10s\", max_size = \"1m\" }"),
        WindowKind::Cumulative {
            step_ms: 10_000,
            max_size_ms: 60_000
        }
    );
    assert_eq!(
        ok("{ type = \"session\", gap = \"500ms\" }"),
        WindowKind::Session { gap_ms: 500 }
    );
}

#[test]
fn names_are_unique_across_kinds_and_late_streams() {
    let text = edited(
        "group_by = [\"ad_id\"]",
        "group_by = [\"ad_id\"]\nlate_events = \"clicks\"",
    ) + "\n[sinks.cpm]\ntype = \"stdout\"\ninputs = [\"cpm\"]\n";
    let errs = errors(&text);
    assert_eq!(errs, [
        "p.toml:8:1: transforms.cpm.late_events: name `clicks` is already used by `sources.clicks`; names must be unique across sources, transforms, late_events and sinks",
        "p.toml:16:8: sinks.cpm: name `cpm` is already used by `transforms.cpm`; names must be unique across sources, transforms, late_events and sinks",
    ]);
}

#[test]
fn runtime_ranges() {
    let text = format!("[runtime]\nshards = 0\nring_capacity = 100\nchunk_bytes = 0\n\n{BASE}");
    assert_eq!(errors(&text), [
        "p.toml:2:1: runtime.shards: must be at least 1",
        "p.toml:3:1: runtime.ring_capacity: 100 is not allowed: must be a power of two, at least 16",
        "p.toml:4:1: runtime.chunk_bytes: must be at least 1",
    ]);
    let text = format!("[runtime]\nshards = 4\nkey_groups = 3\nring_capacity = 8\n\n{BASE}");
    assert_eq!(errors(&text), [
        "p.toml:3:1: runtime.key_groups: 3 key groups cannot be spread over 4 shards: key_groups must be >= shards",
        "p.toml:4:1: runtime.ring_capacity: 8 is not allowed: must be a power of two, at least 16",
    ]);
    let text = format!("[runtime]\nshards = 4\nkey_groups = 4\nring_capacity = 16\n\n{BASE}");
    assert_eq!(build_text(&text).unwrap().runtime.ring_capacity, 16);
}

#[test]
fn too_many_operators() {
    let mut text = BASE.to_string();
    for i in 0..MAX_NODES {
        text += &format!("\n[transforms.w{i}]\ntype = \"window\"\ninputs = [\"clicks\"]\ngroup_by = []\nwindow = {{ type = \"tumbling\", size = \"1s\" }}\naggregates = {{ n = \"count()\" }}\n");
    }
    assert_eq!(
        error(&text),
        "p.toml:4:2: transforms: 256 windows, joins and dedupes, but at most 255 are supported"
    );
    let fewer = text.replacen("[transforms.cpm]", "[transforms.cpm_unused]", 1).replace("[transforms.cpm_unused]\ntype = \"window\"\ninputs = [\"clicks\"]\ngroup_by = [\"ad_id\"]\nwindow = { type = \"tumbling\", size = \"1m\" }\naggregates = { clicks = \"count()\" }\n", "").replacen("[\"cpm\"]", "[\"w0\"]", 1);
    assert_eq!(build_text(&fewer).unwrap().nodes.len(), MAX_NODES);
}

#[test]
fn empty_pipeline_and_source_problems() {
    assert_eq!(
        errors("[runtime]\nshards = 1\n"),
        [
            "p.toml: sources: no sources: a pipeline needs at least one [sources.NAME] table",
            "p.toml: transforms: no transforms: a pipeline needs at least one [transforms.NAME] table",
            "p.toml: sinks: no sinks: a pipeline needs at least one [sinks.NAME] table",
        ]
    );
    let text = edited("type = \"generator\"", "type = \"generator\"\nkeys = 0\nlate_fraction = 1.5\nevent_time = { field = \"time\" }\nwatermark = { idle_timeout = \"0s\", max_drift = \"0s\" }");
    assert_eq!(errors(&text), [
        "p.toml:3:1: sources.clicks.keys: must be at least 1",
        "p.toml:4:1: sources.clicks.late_fraction: 1.5 is not a share: must be between 0.0 and 1.0",
        "p.toml:5:1: sources.clicks.event_time: a generator's events carry their time in `ts`, epoch milliseconds: use { field = \"ts\", unit = \"ms\" } or leave event_time out",
        "p.toml:6:15: sources.clicks.watermark.idle_timeout: must be longer than 0s",
        "p.toml:6:36: sources.clicks.watermark.max_drift: must be longer than 0s (leave it out to never pause the source)",
    ]);
    let text = edited(
        "type = \"generator\"",
        "type = \"file\"\npath = \"data/[.ndjson\"\nevent_time = { field = \"ts\", unit = \"s\" }",
    );
    let e = error(&text);
    assert!(
        e.starts_with(
            "p.toml:3:1: sources.clicks.path: `data/[.ndjson` is not a valid file name or glob"
        ),
        "{e}"
    );
}

#[test]
fn outputs_cannot_share_a_file() {
    let text = edited(
        "type = \"stdout\"",
        "type = \"file\"\npath = \"out/x.ndjson\"",
    ) + "\n[dead_letter]\npath = \"out/x.ndjson\"\n";
    assert_eq!(error(&text), "p.toml:13:1: sinks.out.path: `out/x.ndjson` is also written by `dead_letter.path`; two outputs cannot share a file");
}

#[test]
fn every_problem_is_reported_at_once_in_file_order() {
    let text = format!("[runtime]\nshards = 0\n\n{BASE}")
        .replacen("[\"clicks\"]", "[\"nope\"]", 1)
        .replacen("\"1m\"", "\"0s\"", 1)
        .replacen("\"count()\"", "\"median(bid)\"", 1)
        .replacen("[\"cpm\"]", "[\"cmp\"]", 1);
    let errs = errors(&text);
    let keys: Vec<&str> = errs.iter().map(|e| e.split(": ").nth(1).unwrap()).collect();
    assert_eq!(
        keys,
        [
            "runtime.shards",
            "transforms.cpm.inputs[0]",
            "transforms.cpm.window.size",
            "transforms.cpm.aggregates.clicks",
            "sinks.out.inputs[0]"
        ]
    );
    let lines: Vec<&str> = errs.iter().map(|e| e.split(':').nth(1).unwrap()).collect();
    assert_eq!(lines, ["2", "9", "11", "12", "16"]);
}

#[test]
fn checkpoint_table_is_typed_defaulted_and_checked() {
    let base = "[sources.s]\ntype = \"generator\"\n[transforms.w]\ntype = \"window\"\ninputs = [\"s\"]\ngroup_by = [\"ad_id\"]\nwindow = { type = \"tumbling\", size = \"1m\" }\naggregates = { n = \"count()\" }\n[sinks.o]\ntype = \"stdout\"\ninputs = [\"w\"]\n";
    let load = |extra: &str| {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.toml");
        std::fs::write(&p, format!("{base}{extra}")).unwrap();
        crate::plan::load(&p).map_err(|e| e.to_string())
    };
    let plan = load("[checkpoint]\ndir = \"state/x\"\n").unwrap();
    assert_eq!(
        plan.checkpoint,
        Some(CheckpointPlan {
            dir: "state/x".into(),
            interval_ms: 10_000,
            retain: 3,
            tolerable_failures: 0,
            savepoint_dir: "state/x/savepoints".into(),
        })
    );
    let e = load("[checkpoint]\ndir = \"s\"\ninterval = \"0s\"\nretain = 0\n").unwrap_err();
    assert!(
        e.contains("checkpoint.interval") && e.contains("checkpoint.retain"),
        "{e}"
    );
    let e = load("[checkpoint]\ndir = \"s\"\nretian = 2\n").unwrap_err();
    assert!(e.contains("retian"), "{e}");
    let e = load("[checkpoint]\ninterval = \"1s\"\n").unwrap_err();
    assert!(e.contains("dir"), "{e}");
}

#[test]
fn parquet_sinks_are_typed_and_their_problems_named_by_key() {
    let ok = edited(
        "type = \"stdout\"",
        "type = \"parquet\"\npath = \"out/history/\"\nroll = { rows = 5000 }\n\
         columns = { spend = \"decimal(18,2)\", window_start = \"timestamp\" }",
    );
    let plan = build_text(&ok).unwrap();
    use crate::record::columns::ColumnType;
    assert_eq!(
        plan.sinks[0].sink_as::<ParquetSinkPlan>(),
        Some(&ParquetSinkPlan {
            path: "out/history/".into(),
            roll_rows: 5000,
            columns: vec![
                ("spend".into(), ColumnType::Decimal(Some((18, 2)))),
                ("window_start".into(), ColumnType::Timestamp),
            ],
        })
    );
    // roll defaults to a million rows.
    let plain = edited("type = \"stdout\"", "type = \"parquet\"\npath = \"h\"");
    let plain = build_text(&plain).unwrap();
    let p = plain.sinks[0].sink_as::<ParquetSinkPlan>().unwrap();
    assert_eq!((p.roll_rows, p.columns.len()), (1_000_000, 0));
    let bad = edited(
        "type = \"stdout\"",
        "type = \"parquet\"\npath = \"\"\nroll = { rows = 0 }\n\
         columns = { spend = \"uuid\", n = \"decimal(40,2)\" }",
    );
    let errs = errors(&bad);
    assert_eq!(errs.len(), 4, "{errs:#?}");
    assert!(
        errs.iter()
            .any(|e| e.contains("sinks.out.path: the path cannot be empty")),
        "{errs:#?}"
    );
    assert!(
        errs.iter()
            .any(|e| e.contains("sinks.out.roll.rows: must be at least 1")),
        "{errs:#?}"
    );
    assert!(
        errs.iter().any(|e| e.contains(
            "sinks.out.columns.spend: `uuid` is not a column type; expected one of \"bigint\""
        )),
        "{errs:#?}"
    );
    assert!(
        errs.iter()
            .any(|e| e.contains("sinks.out.columns.n: `decimal(40,2)`")),
        "{errs:#?}"
    );
    let unknown = edited(
        "type = \"stdout\"",
        "type = \"parquet\"\npath = \"h\"\nrol = 1",
    );
    let e = crate::config::parse(&unknown, "p.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("rol"), "{e}");
}
