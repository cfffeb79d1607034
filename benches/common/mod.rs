//! What the benches share: the default click model's events, built by the generator source's own
//! builder so a bench measures exactly what the engine would be handed.
// Each bench uses a part of this module.
#![allow(dead_code)]

use sluice::connectors::generator::bind::GenParser;
use sluice::connectors::generator::model::{default_plan, ClickModel};
use sluice::expr::FieldPath;
use sluice::operators::{window, Operator};
use sluice::plan::{AggFunc, AggPlan, SlotUse, WindowKind, WindowPlan};
use sluice::record::bind::Binding;
use sluice::record::event::Event;

fn path(p: &str) -> FieldPath {
    FieldPath::parse(p).expect("a field path")
}

/// Clicks `0..n` keyed for port 0 (window 0): key `ad_id`, value slot 0 = `bid` (the `sum(bid)`
/// slot), `pos` = the click's index.
pub fn click_events(n: u64) -> Vec<Event> {
    let model = ClickModel::new(&default_plan(Some(n)));
    let binding = Binding {
        port: 0,
        key: vec![path("ad_id")],
        values: vec![(path("bid"), SlotUse::Number)],
        row: false,
    };
    let mut builder = GenParser::new(&[binding]).expect("generator fields");
    let mut ev = [Event::EMPTY];
    (0..n)
        .map(|i| {
            builder.build(&model.click(i), &mut ev);
            ev[0].pos = i;
            ev[0]
        })
        .collect()
}

/// The benchmark job's window: tumbling `size_ms`, `count() + sum(bid)` per `ad_id`, `bid` in
/// value slot 0.
pub fn tumbling_count_sum(size_ms: i64) -> Box<dyn Operator> {
    let plan = WindowPlan {
        group_by: vec![path("ad_id")],
        window: WindowKind::Tumbling { size_ms },
        allowed_lateness_ms: 0,
        aggregates: vec![
            AggPlan {
                name: "clicks".into(),
                func: AggFunc::Count,
                field: None,
                slot: None,
            },
            AggPlan {
                name: "spend".into(),
                func: AggFunc::Sum,
                field: Some(path("bid")),
                slot: Some(0),
            },
        ],
        hot_keys: sluice::plan::HotKeysPlan::OFF,
    };
    window::build(&plan)
}
