//! What the benches share: the default click model's events, built by the generator source's own
//! builder so a bench measures exactly what the engine would be handed.
// Each bench uses a part of this module.
#![allow(dead_code)]

use sluice::event::Event;
use sluice::operators::{window, Operator};
use sluice::plan::{AggFunc, AggPlan, WindowKind, WindowPlan};
use sluice::sources::generator::model::{default_plan, ClickModel};
use sluice::sources::generator::GenParser;
use sluice::sources::record::{Binding, SlotUse};

/// Clicks `0..n` keyed for window 0: key `ad_id`, value slot 0 = `bid` (the `sum(bid)` slot),
/// `pos` = the click's index.
pub fn click_events(n: u64) -> Vec<Event> {
    let model = ClickModel::new(&default_plan(Some(n)));
    let binding = Binding {
        op: 0,
        key_fields: vec!["ad_id".into()],
        slots: vec![("bid".into(), SlotUse::Number)],
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
        name: "clicks_per_minute".into(),
        inputs: vec![0],
        via: vec![],
        group_by: vec!["ad_id".into()],
        window: WindowKind::Tumbling { size_ms },
        allowed_lateness_ms: 0,
        late_events: None,
        aggregates: vec![
            AggPlan {
                name: "clicks".into(),
                func: AggFunc::Count,
                field: None,
            },
            AggPlan {
                name: "spend".into(),
                func: AggFunc::Sum,
                field: Some("bid".into()),
            },
        ],
        hot_keys: sluice::plan::HotKeysPlan::OFF,
    };
    window::build(&plan, &[None, Some(0)])
}
