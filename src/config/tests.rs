//! Parse-level tests: defaults, and the position, key and wording of every kind of parse error.
//! Line numbers refer to `config/example.toml` (the example), edited one key at a time.

use super::*;
use crate::connectors::generator::{GeneratorModel, NexmarkTable};

const EXAMPLE: &str = include_str!("../../config/example.toml");

/// The example with its first `from` replaced by `to` (which must exist, or the test is void).
fn edited(from: &str, to: &str) -> String {
    assert!(EXAMPLE.contains(from), "example has no {from:?}");
    EXAMPLE.replacen(from, to, 1)
}

/// (message, key) of the parse error for `text`.
fn error(text: &str) -> (String, String) {
    match parse(text, "my.toml") {
        Ok(_) => panic!("parsed, but should not have:\n{text}"),
        Err(e) => (e.to_string(), e.key().to_string()),
    }
}

#[test]
fn a_bare_generator_gets_every_default() {
    let (config, _) = parse("[sources.clicks]\ntype = \"generator\"\n", "t.toml").unwrap();
    let SourceConfig::Generator(g) = &config.sources["clicks"] else {
        panic!("not a generator: {config:?}")
    };
    // The model's own keys are filled in by the plan (see `generator_defaults_match_the_click_model`).
    assert_eq!(
        (g.model, g.table, g.seed, g.start_ms),
        (GeneratorModel::Clicks, None, 42, 1_700_000_000_000)
    );
    assert!(g.click_keys_given().is_empty() && g.events_per_second.is_none());
    assert_eq!(g.count, None);
    assert_eq!(g.event_time().field, "ts");
    assert_eq!(g.event_time().unit, TimeUnitConfig::Ms);
    assert_eq!(g.watermark.max_out_of_orderness.as_millis(), 5_000);
    assert_eq!(g.watermark.idle_timeout.as_millis(), 30_000);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let r = &config.runtime;
    assert_eq!(r.shards, cores);
    assert_eq!(
        (r.key_groups, r.ring_capacity, r.chunk_bytes),
        (720, 8192, 1_048_576)
    );
    assert_eq!((r.pin_cores, r.max_line_bytes), (true, 1_048_576));
    assert!(
        config.transforms.is_empty() && config.sinks.is_empty() && config.dead_letter.is_none()
    );
}

#[test]
fn the_example_parses_with_the_values_written() {
    let (config, _) = parse(EXAMPLE, "example.toml").unwrap();
    assert_eq!(config.runtime.shards, 2);
    let SourceConfig::File(f) = &config.sources["clicks"] else {
        panic!()
    };
    assert_eq!(f.path, "data/clicks.ndjson");
    assert_eq!(f.watermark.idle_timeout.as_millis(), 30_000);
    let TransformConfig::Window(w) = &config.transforms["clicks_per_minute"] else {
        panic!("a window")
    };
    assert_eq!(
        w.window,
        WindowConfig::Tumbling {
            size: Duration::parse("1m").unwrap()
        }
    );
    assert_eq!(w.allowed_lateness.as_millis(), 60_000);
    // Aggregates keep the order written, which is the order of the output fields.
    let names: Vec<&str> = w.aggregates.0.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["clicks", "spend", "top_bid", "users"]);
}

#[test]
fn aggregates_keep_written_order_not_alphabetical() {
    let text = edited("clicks = \"count()\", spend", "zz = \"count()\", spend");
    let (config, _) = parse(&text, "t.toml").unwrap();
    let TransformConfig::Window(w) = &config.transforms["clicks_per_minute"] else {
        panic!("a window")
    };
    assert_eq!(w.aggregates.0[0], ("zz".to_string(), "count()".to_string()));
}

#[test]
fn misspelt_key_names_line_column_table_and_suggestion() {
    let (msg, key) = error(&edited("window = {", "windw = {"));
    assert_eq!(msg, "my.toml:16:1: unknown key `windw` in [transforms.clicks_per_minute]; did you mean `window`?");
    assert_eq!(key, "transforms.clicks_per_minute.windw");
}

#[test]
fn misspelt_key_inside_an_inline_table_is_found_there() {
    let (msg, key) = error(&edited("size = \"1m\"", "sise = \"1m\""));
    assert_eq!(msg, "my.toml:16:31: unknown key `sise` in [transforms.clicks_per_minute.window]; did you mean `size`?");
    assert_eq!(key, "transforms.clicks_per_minute.window.sise");
}

#[test]
fn unknown_key_without_a_near_miss_lists_what_is_expected() {
    let (msg, _) = error(&edited("idle_timeout", "colour"));
    assert_eq!(msg, "my.toml:10:44: unknown key `colour` in [sources.clicks.watermark]; expected one of `max_out_of_orderness`, `idle_timeout`, `max_drift`");
}

#[test]
fn unknown_runtime_and_top_level_keys() {
    assert_eq!(
        error(&edited("shards = 2", "shard = 2")).0,
        "my.toml:2:1: unknown key `shard` in [runtime]; did you mean `shards`?"
    );
    assert_eq!(
        error(&edited("[dead_letter]", "[dead_leter]")).0,
        "my.toml:33:2: unknown key `dead_leter` at the top level; did you mean `dead_letter`?"
    );
}

#[test]
fn missing_required_keys_name_the_table() {
    let (msg, key) = error(&edited("path = \"data/clicks.ndjson\"", ""));
    assert_eq!(msg, "my.toml:5:1: missing key `path` in [sources.clicks]");
    assert_eq!(key, "sources.clicks.path");
    // A source without event_time parses (a table without a WATERMARK); the plan refuses the
    // window that reads it (plan::build::tests::untimed).
    let text = edited("event_time = { field = \"ts\", unit = \"ms\" }", "");
    let (config, _) = parse(&text, "my.toml").unwrap_or_else(|e| panic!("{e}"));
    assert!(config.sources["clicks"].event_time().is_none());
    let (msg, _) = error(&edited("group_by = [\"ad_id\"]", ""));
    assert_eq!(
        msg,
        "my.toml:12:1: missing key `group_by` in [transforms.clicks_per_minute]"
    );
    let (msg, _) = error(&edited("path = \"out/late_clicks.ndjson\"", ""));
    assert_eq!(msg, "my.toml:28:1: missing key `path` in [sinks.late]");
}

#[test]
fn missing_or_unknown_component_type() {
    let (msg, key) = error(&edited(
        "type = \"file\"              # file | generator",
        "#",
    ));
    assert_eq!(msg, "my.toml:5:1: missing key `type` in [sources.clicks] (expected type = \"file\", \"generator\" or \"kafka\")");
    assert_eq!(key, "sources.clicks.type");
    let (msg, key) = error(&edited("type = \"file\"    ", "type = \"kafak\"   "));
    assert_eq!(msg, "my.toml:6:1: `sources.clicks.type`: unknown value `kafak`; expected one of `file`, `generator`, `kafka`; did you mean `kafka`?");
    assert_eq!(key, "sources.clicks.type");
    let (msg, _) = error(&edited("type = \"window\"", "type = \"windows\""));
    assert_eq!(msg, "my.toml:13:1: `transforms.clicks_per_minute.type`: unknown value `windows`; expected one of `window`, `filter`, `select`, `temporal_join`, `interval_join`, `join`, `dedupe`, `top_n`, `rank`, `group_aggregate`, `over_aggregate`; did you mean `window`?");
    // A window spec without its own type: the nested table is the one named.
    let (msg, key) = error(&edited("type = \"tumbling\", ", ""));
    assert_eq!(
        msg,
        "my.toml:16:1: missing key `type` in [transforms.clicks_per_minute.window]"
    );
    assert_eq!(key, "transforms.clicks_per_minute.window.type");
    let (msg, _) = error(&edited("\"tumbling\"", "\"tumbing\""));
    assert!(
        msg.starts_with(
            "my.toml:16:12: `transforms.clicks_per_minute.window.type`: unknown value `tumbing`"
        ),
        "{msg}"
    );
    assert!(msg.ends_with("did you mean `tumbling`?"), "{msg}");
}

#[test]
fn bad_enum_values_inside_inline_tables() {
    let (msg, _) = error(&edited("unit = \"ms\"", "unit = \"ns\""));
    assert_eq!(msg, "my.toml:9:30: `sources.clicks.event_time.unit`: unknown value `ns`; expected one of `ms`, `s`, `us`, `rfc3339`; did you mean `ms`?");
    let (msg, _) = error(&edited("format = \"json\"", "format = \"xml\""));
    assert_eq!(
        msg,
        "my.toml:8:1: `sources.clicks.format`: unknown value `xml`; expected one of `json`, `csv`, `avro`"
    );
}

#[test]
fn bad_durations_name_the_key_and_the_expected_form() {
    let (msg, key) = error(&edited("size = \"1m\"", "size = \"10 parsecs\""));
    assert_eq!(key, "transforms.clicks_per_minute.window.size");
    assert!(msg.starts_with("my.toml:16:31: `transforms.clicks_per_minute.window.size`: invalid duration `10 parsecs`: expected a whole number followed by a unit"), "{msg}");
    let (msg, _) = error(&edited(
        "allowed_lateness = \"1m\"",
        "allowed_lateness = \"-1m\"",
    ));
    assert!(
        msg.starts_with(
            "my.toml:17:1: `transforms.clicks_per_minute.allowed_lateness`: invalid duration `-1m`"
        ),
        "{msg}"
    );
    let (msg, _) = error(&edited("size = \"1m\"", "size = 60000"));
    assert!(msg.starts_with("my.toml:16:31: `transforms.clicks_per_minute.window.size`: invalid type: integer `60000`, expected a duration string"), "{msg}");
    let (msg, _) = error(&edited("idle_timeout = \"30s\"", "idle_timeout = \"30\""));
    assert!(
        msg.starts_with(
            "my.toml:10:44: `sources.clicks.watermark.idle_timeout`: invalid duration `30`"
        ),
        "{msg}"
    );
}

#[test]
fn wrong_value_types_name_the_key() {
    let (msg, key) = error(&edited("shards = 2", "shards = \"two\""));
    assert_eq!(
        msg,
        "my.toml:2:1: `runtime.shards`: invalid type: string \"two\", expected usize"
    );
    assert_eq!(key, "runtime.shards");
    let (msg, _) = error(&edited("shards = 2", "shards = -2"));
    assert_eq!(
        msg,
        "my.toml:2:1: `runtime.shards`: invalid value: integer `-2`, expected usize"
    );
    let (msg, _) = error(&edited("[\"ad_id\"]", "[7]"));
    assert_eq!(msg, "my.toml:15:13: `transforms.clicks_per_minute.group_by[0]`: invalid type: integer `7`, expected a string");
    let (msg, _) = error(&edited("\"count()\"", "3"));
    assert_eq!(msg, "my.toml:21:16: `transforms.clicks_per_minute.aggregates.clicks`: invalid type: integer `3`, expected a string");
}

#[test]
fn toml_syntax_errors_have_a_position() {
    let (msg, key) = error(&edited("shards = 2", "shards = "));
    assert!(msg.starts_with("my.toml:2:27: "), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
    assert_eq!(key, "");
    let (msg, _) = error(&edited("shards = 2", "shards = 2\nshards = 3"));
    assert!(
        msg.starts_with("my.toml:3:1: duplicate key `shards`"),
        "{msg}"
    );
}

#[test]
fn unreadable_file_names_the_path() {
    let err = load(Path::new("/nonexistent/sluice.toml")).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }));
    assert!(
        err.to_string()
            .starts_with("/nonexistent/sluice.toml: cannot read the config file: "),
        "{err}"
    );
}

/// A filter and a sink after a source `g`, so that the text builds into a plan.
const STDOUT_JOB: &str = "[transforms.f]\ntype = \"filter\"\ninputs = [\"g\"]\nwhere = \"true\"\n\
    [sinks.o]\ntype = \"stdout\"\ninputs = [\"f\"]\n";

/// `sluice loadgen` and the `generator` source must make the same events from the same defaults,
/// so the defaults the plan fills in must equal the click model's. (Test-only import against the
/// usual config -> sources direction: the point is to compare the two.)
#[test]
fn generator_defaults_match_the_click_model() {
    let text = format!("[sources.g]\ntype = \"generator\"\n{STDOUT_JOB}");
    let (config, src) = parse(&text, "t.toml").unwrap();
    let plan = crate::plan::build(&config, &src).unwrap();
    let Some(g) = plan.sources[0].source_as::<crate::connectors::generator::ClickSource>() else {
        panic!("{:?}", plan.sources[0].source)
    };
    assert_eq!(
        g.model,
        crate::connectors::generator::model::default_plan(None)
    );
}

/// ... and a Nexmark generator's defaults must equal `sluice loadgen nexmark`'s.
#[test]
fn nexmark_generator_defaults_match_loadgen_nexmark() {
    let text = format!(
        "[sources.g]\ntype = \"generator\"\nmodel = \"nexmark\"\ntable = \"bid\"\n{STDOUT_JOB}"
    );
    let (config, src) = parse(&text, "t.toml").unwrap();
    let plan = crate::plan::build(&config, &src).unwrap();
    let Some(n) = plan.sources[0]
        .source_as::<crate::connectors::generator::NexmarkTableSource>()
        .map(|n| &n.table)
    else {
        panic!("{:?}", plan.sources[0].source)
    };
    assert_eq!(
        crate::connectors::generator::nexmark::config(n),
        crate::connectors::generator::nexmark::model::NexmarkConfig::default()
    );
    assert_eq!((n.table, n.count), (NexmarkTable::Bid, None));
    let et = plan.sources[0]
        .event_time
        .as_ref()
        .expect("nexmark has event time");
    assert_eq!(
        (et.field.as_str(), et.unit),
        ("dateTime", crate::plan::TimeUnit::Millis)
    );
}

#[test]
fn generator_model_and_table_must_be_known_names() {
    let (msg, key) = error("[sources.g]\ntype = \"generator\"\nmodel = \"nexmak\"\n");
    assert_eq!(key, "sources.g.model", "{msg}");
    assert!(
        msg.contains("unknown value `nexmak`") && msg.contains("did you mean `nexmark`?"),
        "{msg}"
    );
    let (msg, key) =
        error("[sources.g]\ntype = \"generator\"\nmodel = \"nexmark\"\ntable = \"bids\"\n");
    assert_eq!(key, "sources.g.table", "{msg}");
    assert!(
        msg.contains("expected one of `person`, `auction`, `bid`"),
        "{msg}"
    );
}

#[test]
fn hot_key_threshold_default_follows_the_shard_count() {
    use super::defaults::hot_key_threshold;
    // A quarter of a shard's average load on top of its own, and never above 5%.
    assert_eq!(hot_key_threshold(1), 0.05);
    assert_eq!(hot_key_threshold(5), 0.05);
    assert_eq!(hot_key_threshold(10), 0.025);
    assert_eq!(hot_key_threshold(16), 0.015625);
}

#[test]
fn every_part_s_first_problem_is_reported_in_file_order() {
    // Four broken parts: a wrong type, a misspelt key, a missing `type`, and an unknown sink kind.
    // serde alone stops at the first; each must be named with its own line and key.
    let text = EXAMPLE
        .replacen("shards = 2", "shards = \"two\"", 1)
        .replacen("[sinks.counts]\ntype = \"file\"", "[sinks.counts]\ntype = \"fil\"", 1)
        + "\n[sources.extra]\npath = \"x.ndjson\"\n\n[transforms.also]\ntype = \"filter\"\ninputs = [\"clicks\"]\nwhere = \"true\"\ncolour = \"red\"\n";
    assert!(text.contains("shards = \"two\"") && text.contains("type = \"fil\""));
    let err = parse(&text, "my.toml").unwrap_err();
    let problems = err.problems();
    let keys: Vec<&str> = problems.iter().map(|p| p.key()).collect();
    assert_eq!(
        keys,
        [
            "runtime.shards",
            "sinks.counts.type",
            "sources.extra.type",
            "transforms.also.colour"
        ],
        "{err}"
    );
    let lines: Vec<usize> = problems
        .iter()
        .map(|p| match p {
            ConfigError::Invalid { at, .. } => at.line_col.map_or(0, |l| l.0),
            _ => 0,
        })
        .collect();
    assert!(
        lines.windows(2).all(|w| w[0] < w[1]),
        "not in file order: {lines:?}"
    );
    let shown = err.to_string();
    assert_eq!(shown.lines().count(), 4, "{shown}");
    assert!(shown.lines().all(|l| l.starts_with("my.toml:")), "{shown}");
}

#[test]
fn type_hints_list_every_kind_the_parser_accepts() {
    let (msg, _) = error("[sinks.out]\ninputs = [\"x\"]\n");
    assert!(
        msg.contains("\"file\", \"stdout\", \"kafka\", \"postgres\" or \"parquet\""),
        "{msg}"
    );
    let (msg, _) = error("[sources.s]\npath = \"x\"\n");
    assert!(
        msg.contains("\"file\", \"generator\" or \"kafka\""),
        "{msg}"
    );
    // The hint comes from the parser's own list, so it has every transform kind.
    let kinds = kinds_of::<TransformConfig>();
    for k in [
        "window",
        "filter",
        "select",
        "temporal_join",
        "interval_join",
        "dedupe",
    ] {
        assert!(kinds.iter().any(|x| x == k), "{k} missing from {kinds:?}");
    }
    let (msg, _) = error("[transforms.t]\ninputs = [\"x\"]\n");
    assert!(
        kinds.iter().all(|k| msg.contains(&format!("\"{k}\""))),
        "{msg}"
    );
}

#[test]
fn a_syntax_error_is_still_reported_alone() {
    let err = parse(
        "[runtime]\nshards = \n[sinks.x]\ntype = \"fil\"\n",
        "my.toml",
    )
    .unwrap_err();
    assert_eq!(err.problems().len(), 1, "{err}");
}
