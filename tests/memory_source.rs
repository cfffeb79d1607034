//! The in-memory source (pre-parsed events handed to `runtime::run`, as the engine benchmark
//! does) must give exactly what the generator source gives for the same events: same lines, same
//! count, whatever the shard count, ring capacity or events per chunk (small rings force the
//! no-credit path, where the event that found no credit waits and production stops).

mod common;

use common::late_clicks_toml;
use sluice::connectors::generator::bind::GenParser;
use sluice::connectors::generator::model::ClickModel;
use sluice::connectors::generator::ClickSource;
use sluice::connectors::memory::MemorySource;
use sluice::expr::FieldPath;
use sluice::plan::Plan;
use sluice::plan::SlotUse;
use sluice::record::bind::Binding;
use sluice::record::event::Event;
use sluice::runtime::{self, RunOptions};
use std::path::Path;
use std::sync::Arc;

const EVENTS: u64 = 300_000;

fn job(
    dir: &Path,
    name: &str,
    shards: usize,
    ring: usize,
    hot_keys: &str,
) -> (Plan, std::path::PathBuf) {
    let out = dir.join(format!("{name}.ndjson"));
    let toml = late_clicks_toml(
        &format!("shards = {shards}\nring_capacity = {ring}"),
        EVENTS,
        r#"clicks = "count()", spend = "sum(bid)", top = "max(bid)""#,
        &out,
        "",
    );
    let toml = toml.replace(
        "aggregates = {",
        &format!("hot_keys = {{ mode = \"{hot_keys}\" }}\naggregates = {{"),
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    (sluice::plan::load(&path).unwrap(), out)
}

/// The generator's events for the plan's model, built by the generator source's own builder.
fn events(plan: &Plan) -> Vec<Event> {
    let Some(g) = plan.sources[0].source_as::<ClickSource>() else {
        panic!("the test job reads a generator");
    };
    let model = ClickModel::new(&g.model);
    let path = |p: &str| FieldPath::parse(p).unwrap();
    let binding = Binding {
        port: 0,
        key: vec![path("ad_id")],
        values: vec![(path("bid"), SlotUse::Number)],
        row: false,
    };
    let mut builder = GenParser::new(&[binding]).unwrap();
    let mut ev = [Event::EMPTY];
    (0..EVENTS)
        .map(|i| {
            builder.build(&model.click(i), &mut ev);
            ev[0]
        })
        .collect()
}

fn sorted_lines(path: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

#[test]
fn memory_partition_gives_what_the_generator_gives() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, out) = job(dir.path(), "generator", 2, 8192, "off");
    let want = runtime::run(&plan, RunOptions::default()).unwrap();
    let want_lines = sorted_lines(&out);
    assert!(want_lines.len() > 1000, "the job emits windows");
    assert!(
        want.late_dropped > 0 && want.results_refired > 0,
        "late events are exercised"
    );
    let evs: Arc<[Event]> = events(&plan).into();
    // Two-phase aggregation (`hot_keys`) holds events back in the same loop: it must give the
    // same lines too.
    for (shards, ring, per_chunk, hot) in [
        (1, 8192, 16_384, "off"),
        (2, 16, 1000, "off"),
        (2, 8192, 16_384, "off"),
        (3, 64, 777, "off"),
        (2, 16, 1000, "salt"),
        (2, 8192, 16_384, "auto"),
        (3, 64, 777, "salt"),
    ] {
        let name = format!("memory-{shards}-{ring}-{per_chunk}-{hot}");
        let (plan, out) = job(dir.path(), &name, shards, ring, hot);
        // Its partition's watermark bound is the plan source's (2 s).
        let memory = Arc::new(MemorySource::new("memory", evs.clone(), per_chunk));
        let got = runtime::run(
            &plan,
            RunOptions {
                sources: Some(vec![memory]),
                ..RunOptions::default()
            },
        )
        .unwrap();
        assert_eq!(got.events, EVENTS, "{name}");
        if hot != "off" {
            let combined: u64 = got.per_shard.iter().map(|s| s.events_combined).sum();
            assert!(combined > EVENTS / 20, "{name}: {combined} events combined");
        }
        assert_eq!(sorted_lines(&out), want_lines, "{name}");
    }
}
