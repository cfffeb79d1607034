//! Tests of `type = "generator"` validation by model: a Nexmark table is accepted with its
//! defaults, and every key of the wrong model, a missing or misplaced `table`, and a field no
//! Nexmark record has are refused by key, with the reason.

use crate::config::parse;
use crate::connectors::generator::{NexmarkSourcePlan, NexmarkTable, NexmarkTableSource};
use crate::plan::{build, Plan, PlanErrors};

/// A Nexmark source feeding a filter on a field (which the plan checks against the table's).
fn job(source_keys: &str) -> String {
    job_where(source_keys, "dateTime > 0")
}

fn job_where(source_keys: &str, condition: &str) -> String {
    format!(
        "[sources.bids]\ntype = \"generator\"\nmodel = \"nexmark\"\n{source_keys}\n\
         [transforms.big]\ntype = \"filter\"\ninputs = [\"bids\"]\nwhere = \"{condition}\"\n\n\
         [sinks.out]\ntype = \"stdout\"\ninputs = [\"big\"]\n"
    )
}

fn build_text(text: &str) -> Result<Plan, PlanErrors> {
    let (config, src) = parse(text, "p.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    build(&config, &src)
}

fn errors(text: &str) -> Vec<String> {
    match build_text(text) {
        Ok(p) => panic!("built, but should not have: {p:?}\n{text}"),
        Err(e) => e.0.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn a_nexmark_table_builds_with_loadgen_nexmarks_defaults() {
    let plan = build_text(&job("table = \"bid\"\ncount = 20000\nseed = 7")).unwrap();
    let s = &plan.sources[0];
    assert_eq!(
        s.source_as::<NexmarkTableSource>().map(|n| n.table),
        Some(NexmarkSourcePlan {
            table: NexmarkTable::Bid,
            seed: 7,
            first_event_rate: 10_000,
            start_ms: 1_700_000_000_000,
            count: Some(20000),
        })
    );
    assert_eq!(
        s.event_time.as_ref().map(|t| t.field.as_str()),
        Some("dateTime")
    );
    // The watermark is the source's own (Nexmark's queries use 4 s).
    let plan = build_text(&job(
        "table = \"auction\"\nevents_per_second = 500\nstart_ms = 0\n\
         event_time = { field = \"expires\", unit = \"ms\" }\n\
         watermark = { max_out_of_orderness = \"4s\" }",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let s = &plan.sources[0];
    let Some(n) = s.source_as::<NexmarkTableSource>().map(|n| n.table) else {
        panic!("{:?}", s.source)
    };
    assert_eq!(
        (n.table, n.first_event_rate, n.start_ms),
        (NexmarkTable::Auction, 500, 0)
    );
    assert_eq!(
        s.event_time.as_ref().map(|t| t.field.as_str()),
        Some("expires")
    );
    assert_eq!(s.watermark.max_out_of_orderness_ms, 4000);
}

#[test]
fn click_keys_are_refused_with_model_nexmark_each_by_name() {
    let errs = errors(&job(
        "table = \"bid\"\nkeys = 10\nzipf_exponent = 1.2\ncelebrity_share = 0.1\nusers = 5\n\
         out_of_orderness = \"1s\"\nlate_fraction = 0.1\nlate_by = \"1m\"",
    ));
    let keys = [
        "keys",
        "zipf_exponent",
        "celebrity_share",
        "users",
        "out_of_orderness",
        "late_fraction",
        "late_by",
    ];
    assert_eq!(errs.len(), keys.len(), "{errs:#?}");
    for (i, (e, k)) in errs.iter().zip(keys).enumerate() {
        // Each at its own line (the source's keys start at line 4).
        let want = format!(
            "p.toml:{}:1: sources.bids.{k}: applies to model = \"clicks\" only; ",
            i + 5
        );
        assert!(e.starts_with(&want), "{e}\nwant {want}");
    }
}

#[test]
fn table_is_required_for_nexmark_and_refused_for_clicks() {
    let errs = errors(&job("count = 10"));
    assert_eq!(
        errs,
        ["p.toml:1:10: sources.bids.table: model = \"nexmark\" needs table = \"person\", \"auction\" or \"bid\" (one source per table)"]
    );
    let clicks = job("table = \"bid\"").replace("model = \"nexmark\"", "model = \"clicks\"");
    let errs = errors(&clicks.replace("dateTime > 0", "bid > 1000"));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(
        errs[0].starts_with("p.toml:4:1: sources.bids.table: only model = \"nexmark\" has tables"),
        "{errs:#?}"
    );
}

#[test]
fn fields_a_nexmark_table_lacks_are_refused() {
    let errs = errors(&job_where("table = \"person\"", "price > 1000"));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(
        errs[0].contains("reads field `price`, but generator source `bids` has no field `price` (it has `id`, `name`, "),
        "{errs:#?}"
    );
    build_text(&job_where("table = \"bid\"", "price > 1000")).unwrap_or_else(|e| panic!("{e}"));
    let errs = errors(&job(
        "table = \"bid\"\nevent_time = { field = \"datetime\" }",
    ));
    assert_eq!(
        errs,
        ["p.toml:5:16: sources.bids.event_time.field: Nexmark bid records have no field `datetime` (they have `auction`, `bidder`, `price`, `channel`, `url`, `dateTime`, `extra`; the default is `dateTime`); did you mean `dateTime`?"]
    );
    let errs = errors(&job("table = \"bid\"\nevents_per_second = 0"));
    assert_eq!(
        errs,
        ["p.toml:5:1: sources.bids.events_per_second: must be at least 1"]
    );
}
