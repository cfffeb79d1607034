//! The pane table against a `HashMap` model: growth, collisions, long keys re-laying out the rows,
//! merging, clearing.

use super::*;
use crate::event::{hash_key, Event, Value};
use crate::plan::{AggFunc, AggPlan};
use std::collections::HashMap;

fn layout() -> AggLayout {
    let agg = |name: &str, func| AggPlan {
        name: name.into(),
        func,
        field: Some("v".into()),
    };
    AggLayout::new(
        &[agg("s", AggFunc::Sum), agg("d", AggFunc::CountDistinct)],
        &[Some(0), Some(0)],
    )
}

fn event(key: &str, hash: u64, v: i64) -> Event {
    let mut ev = Event::EMPTY;
    assert!(ev.set_key(key.as_bytes()));
    ev.hash = hash;
    ev.set_value(0, Value::Int(v));
    ev
}

fn fields(t: &AccTable, l: &AggLayout, r: usize) -> String {
    let mut out = Vec::new();
    l.write_fields(t.accs(r), t.sketches(), &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn behaves_like_a_map_through_growth_collisions_and_longer_keys() {
    let l = layout();
    let mut t = AccTable::new(&l);
    assert_eq!(t.key_bytes(), 15);
    let mut model: HashMap<String, (u64, i64, std::collections::BTreeSet<i64>)> = HashMap::new();
    for i in 0..6000u64 {
        let k = i % 1700;
        // Keys grow longer as the table fills: 2, then 20, then 54 bytes wide rows.
        let key = match i {
            0..=2999 => format!("k{k}"),
            3000..=4499 => format!("k{k}-{}", "x".repeat(16)),
            _ => format!("k{k}-{}", "y".repeat(54 - 6)),
        };
        let key = key[..key.len().min(INLINE_KEY_BYTES)].to_string();
        // Every third key shares its low bits with others: same home slot, different keys.
        let full = hash_key(key.as_bytes());
        let hash = if k % 3 == 0 { full & !0xfff } else { full };
        let v = (i % 7) as i64;
        t.add(&event(&key, hash, v), &l);
        let m = model.entry(key).or_insert((hash, 0, Default::default()));
        m.1 += v;
        m.2.insert(v);
    }
    assert_eq!(t.len(), model.len());
    assert_eq!(t.key_bytes(), 55);
    for (key, (hash, sum, distinct)) in &model {
        let e = event(key, *hash, 0);
        let r = t.find(*hash, &e.key, e.key_len).expect("present");
        assert_eq!(
            fields(&t, &l, r),
            format!(",\"s\":{sum},\"d\":{}", distinct.len())
        );
    }
    // Rows come back in insertion order with their keys intact.
    let first: Vec<String> = t
        .rows()
        .take(2)
        .map(|r| String::from_utf8(r.key().to_vec()).unwrap())
        .collect();
    assert_eq!(first, ["k0", "k1"]);
    let e = event("k1", 1, 0);
    assert_eq!(t.find(1, &e.key, e.key_len), None, "same key, other hash");
    t.clear();
    assert!(t.is_empty() && t.sketches().is_empty());
    let e = event("k1", model["k1"].0, 0);
    assert!(t.find(e.hash, &e.key, e.key_len).is_none());
    // A cleared table starts from empty accumulators.
    t.add(&event("k1", e.hash, 5), &l);
    let r = t.find(e.hash, &e.key, e.key_len).unwrap();
    assert_eq!(fields(&t, &l, r), ",\"s\":5,\"d\":1");
}

#[test]
fn keys_differing_only_in_length_are_different_rows() {
    // A missing last group-by field leaves a trailing separator: "a\0" and "a" must not meet.
    let l = layout();
    let mut t = AccTable::new(&l);
    for key in ["a", "a\0", "a\0\0"] {
        t.add(&event(key, 7, 1), &l);
    }
    assert_eq!(t.len(), 3);
    let lens: Vec<usize> = t.rows().map(|r| r.key().len()).collect();
    assert_eq!(lens, [1, 2, 3]);
}

#[test]
fn merge_into_adds_rows_and_sketches_from_another_table() {
    let l = layout();
    let (mut a, mut b) = (AccTable::new(&l), AccTable::new(&l));
    let ev = |key: &str, v| event(key, hash_key(key.as_bytes()), v);
    a.add(&ev("x", 1), &l);
    a.add(&ev("x", 2), &l);
    b.add(&ev("x", 2), &l);
    b.add(&ev("y", 3), &l);
    let mut m = AccTable::new(&l);
    for src in [&a, &b] {
        for row in src.rows() {
            m.merge_into(row.hash, &row.key, row.len, row.accs, src.sketches(), &l);
        }
    }
    let got: Vec<String> = (0..m.len()).map(|r| fields(&m, &l, r)).collect();
    assert_eq!(got, [",\"s\":5,\"d\":2", ",\"s\":3,\"d\":1"]);
}
