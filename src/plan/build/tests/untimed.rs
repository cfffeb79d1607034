//! Sources without `event_time` (SQL tables without a WATERMARK): they feed filters, selects and
//! sinks; an operator that works in event time over one, directly or through steps, is refused
//! naming the operator and the source; watermark alignment needs an event time.

use super::{build_text, errors};

/// `[sources.plain]` without event_time, `[sources.timed]` with it, and `body` after them.
fn job(body: &str) -> String {
    format!(
        r#"[sources.plain]
type = "file"
path = "plain.ndjson"

[sources.timed]
type = "file"
path = "timed.ndjson"
event_time = {{ field = "ts", unit = "ms" }}

{body}"#
    )
}

#[test]
fn an_untimed_source_feeds_steps_and_sinks() {
    let plan = build_text(&job(r#"[transforms.big]
type = "filter"
inputs = ["plain"]
where = "bid > 4"

[sinks.out]
type = "stdout"
inputs = ["big", "timed"]
"#))
    .unwrap_or_else(|e| panic!("{e}"));
    let times: Vec<Option<&str>> = plan
        .sources
        .iter()
        .map(|s| s.event_time.as_ref().map(|t| t.field.as_str()))
        .collect();
    assert_eq!(times, [None, Some("ts")]);
}

#[test]
fn a_window_over_an_untimed_source_is_refused_even_through_steps() {
    let window = |input: &str| {
        format!(
            r#"[transforms.big]
type = "filter"
inputs = ["plain"]
where = "bid > 4"

[transforms.cpm]
type = "window"
inputs = ["{input}"]
group_by = ["ad_id"]
window = {{ type = "tumbling", size = "1m" }}
aggregates = {{ n = "count()" }}

[sinks.out]
type = "stdout"
inputs = ["cpm"]
"#
        )
    };
    let want = "p.toml:15:13: transforms.cpm: window works in event time, but it reads source `plain`, which has none: give `plain` an event_time (in SQL, a WATERMARK on its table)";
    assert_eq!(errors(&job(&window("plain"))), [want]);
    assert_eq!(errors(&job(&window("big"))), [want]);
    // The timed source alone is fine.
    build_text(&job(&window("timed"))).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn alignment_needs_event_time() {
    let body = "[transforms.big]\ntype = \"filter\"\ninputs = [\"plain\"]\nwhere = \"bid > 4\"\n\n\
                [sinks.out]\ntype = \"stdout\"\ninputs = [\"big\"]\n";
    let text = job(body).replacen(
        "path = \"plain.ndjson\"",
        "path = \"plain.ndjson\"\nwatermark = { max_drift = \"1s\" }",
        1,
    );
    assert_eq!(errors(&text), ["p.toml:4:15: sources.plain.watermark.max_drift: watermark alignment needs an event_time on the source (without one its records have no time to align)"]);
}
