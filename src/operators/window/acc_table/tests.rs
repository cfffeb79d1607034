//! The pane table against a `HashMap` model: growth, collisions, longer keys re-laying out the
//! rows, keys past the inline limit kept beside them, merging, clearing, and snapshots (whole or
//! split by key hash) with every kind of key.

use super::*;
use crate::expr::FieldPath;
use crate::plan::{AggFunc, AggPlan};
use crate::record::event::{hash_key, PayloadBuf, Value};
use std::collections::{BTreeSet, HashMap};

fn layout_of(funcs: &[(&str, AggFunc)]) -> AggLayout {
    let aggs: Vec<AggPlan> = funcs
        .iter()
        .map(|&(name, func)| AggPlan {
            name: name.into(),
            func,
            field: Some(FieldPath::parse("v").unwrap()),
            slot: Some(0),
        })
        .collect();
    AggLayout::new(&aggs)
}

fn layout() -> AggLayout {
    layout_of(&[("s", AggFunc::Sum), ("d", AggFunc::CountDistinct)])
}

/// Sum and max only: rows of plain words, which a snapshot copies whole when every key is inline.
fn plain_layout() -> AggLayout {
    layout_of(&[("s", AggFunc::Sum), ("m", AggFunc::Max)])
}

fn event(key: &str, hash: u64, v: i64) -> Event {
    let mut ev = Event::EMPTY;
    assert!(ev.set_key(key.as_bytes()));
    ev.hash = hash;
    ev.set_value(0, Value::Int(v));
    ev
}

/// Adds `v` under `key` as the window does: inline events through `add`, longer keys (in the
/// payload) through `add_rec`.
fn add(t: &mut AccTable, l: &AggLayout, key: &[u8], hash: u64, v: i64) -> usize {
    let mut ev = Event::EMPTY;
    ev.hash = hash;
    let mut p = PayloadBuf::default();
    p.set_key(&mut ev, key);
    p.set_value(&mut ev, 0, Value::Int(v));
    p.finish(&mut ev, None, None);
    if ev.has_payload() {
        let rec = Rec::parse(&ev, &p.bytes).unwrap();
        t.add_rec(&rec, l)
    } else {
        t.add_row(&ev, l)
    }
}

fn fields(t: &AccTable, l: &AggLayout, r: usize) -> String {
    let mut out = Vec::new();
    l.write_fields(t.accs(r), t.sketches(), &mut out);
    String::from_utf8(out).unwrap()
}

/// Every row as (key, rendered accumulators), sorted.
fn contents(t: &AccTable, l: &AggLayout) -> Vec<(Vec<u8>, String)> {
    let mut v: Vec<(Vec<u8>, String)> = (0..t.len())
        .zip(t.rows())
        .map(|(r, row)| (row.key().to_vec(), fields(t, l, r)))
        .collect();
    v.sort();
    v
}

#[test]
fn behaves_like_a_map_through_growth_collisions_and_longer_keys() {
    let l = layout();
    let mut t = AccTable::new(&l);
    assert_eq!(t.key_bytes(), 15);
    let mut model: HashMap<String, (u64, i64, BTreeSet<i64>)> = HashMap::new();
    for i in 0..6000u64 {
        let k = i % 1700;
        // Keys grow longer as the table fills: 2, then 20, then 39 (the inline limit) bytes wide
        // rows, then keys too long to be inline.
        let key = match i {
            0..=2999 => format!("k{k}"),
            3000..=3999 => format!("k{k}-{}", "x".repeat(16)),
            4000..=4999 => format!("k{k}-{}", "y".repeat(39)),
            _ => format!("k{k}-{}", "z".repeat(200)),
        };
        let key = if (4000..5000).contains(&i) {
            key[..INLINE_KEY_BYTES].to_string()
        } else {
            key
        };
        // Every third key shares its low bits with others: same home slot, different keys.
        let full = hash_key(key.as_bytes());
        let hash = if k % 3 == 0 { full & !0xfff } else { full };
        let v = (i % 7) as i64;
        add(&mut t, &l, key.as_bytes(), hash, v);
        let m = model.entry(key).or_insert((hash, 0, Default::default()));
        m.1 += v;
        m.2.insert(v);
    }
    assert_eq!(t.len(), model.len());
    assert_eq!(
        t.key_bytes(),
        INLINE_KEY_BYTES,
        "longer keys do not widen rows"
    );
    for (key, (hash, sum, distinct)) in &model {
        let r = t.find_key(*hash, key.as_bytes()).expect("present");
        assert_eq!(
            fields(&t, &l, r),
            format!(",\"s\":{sum},\"d\":{}", distinct.len())
        );
        if key.len() <= INLINE_KEY_BYTES {
            let e = event(key, *hash, 0);
            assert_eq!(t.find(*hash, &e.key, e.key_len), Some(r));
        }
    }
    // Rows come back in insertion order with their keys intact, long ones included.
    let keys: Vec<String> = t
        .rows()
        .map(|r| String::from_utf8(r.key().to_vec()).unwrap())
        .collect();
    assert_eq!(keys[..2], ["k0", "k1"]);
    assert_eq!(
        keys.iter().filter(|k| k.len() > INLINE_KEY_BYTES).count(),
        1000
    );
    assert_eq!(keys.iter().collect::<BTreeSet<_>>(), model.keys().collect());
    let e = event("k1", 1, 0);
    assert_eq!(t.find(1, &e.key, e.key_len), None, "same key, other hash");
    let long = format!("k1-{}", "z".repeat(200));
    assert_eq!(t.find_key(1, long.as_bytes()), None, "long key, other hash");
    t.clear();
    assert!(t.is_empty() && t.sketches().is_empty());
    let e = event("k1", model["k1"].0, 0);
    assert!(t.find(e.hash, &e.key, e.key_len).is_none());
    assert!(t.find_key(model[&long].0, long.as_bytes()).is_none());
    // A cleared table starts from empty accumulators.
    t.add(&event("k1", e.hash, 5), &l);
    let r = t.find(e.hash, &e.key, e.key_len).unwrap();
    assert_eq!(fields(&t, &l, r), ",\"s\":5,\"d\":1");
    let r = add(&mut t, &l, long.as_bytes(), model[&long].0, 6);
    assert_eq!(t.find_key(model[&long].0, long.as_bytes()), Some(r));
    assert_eq!(fields(&t, &l, r), ",\"s\":6,\"d\":1");
}

#[test]
fn keys_differing_only_in_length_are_different_rows() {
    // A missing last group-by field leaves a trailing separator: "a\0" and "a" must not meet.
    let l = layout();
    let mut t = AccTable::new(&l);
    for key in ["a", "a\0", "a\0\0"] {
        t.add(&event(key, 7, 1), &l);
    }
    // The same past the inline limit, and a long key whose first bytes are an inline key.
    let long = "b".repeat(200);
    for key in [&long[..], &long[..199], &long[..INLINE_KEY_BYTES]] {
        add(&mut t, &l, key.as_bytes(), 7, 1);
    }
    add(&mut t, &l, format!("{long}\0").as_bytes(), 7, 1);
    assert_eq!(t.len(), 7);
    let lens: Vec<usize> = t.rows().map(|r| r.key().len()).collect();
    assert_eq!(lens, [1, 2, 3, 200, 199, INLINE_KEY_BYTES, 201]);
}

#[test]
fn a_long_key_survives_rows_being_widened_after_it() {
    // The long key's row holds its index in the first key word; widening for a longer inline key
    // moves the length byte and must leave the index intact.
    let l = plain_layout();
    let mut t = AccTable::new(&l);
    let long = "L".repeat(200);
    let h = hash_key(long.as_bytes());
    add(&mut t, &l, long.as_bytes(), h, 4);
    assert_eq!(t.key_bytes(), 15);
    let wide = "w".repeat(INLINE_KEY_BYTES);
    add(&mut t, &l, wide.as_bytes(), hash_key(wide.as_bytes()), 1);
    assert_eq!(t.key_bytes(), INLINE_KEY_BYTES);
    let r = add(&mut t, &l, long.as_bytes(), h, 5);
    assert_eq!(t.len(), 2);
    assert_eq!(t.rows().next().unwrap().key(), long.as_bytes());
    assert_eq!(fields(&t, &l, r), ",\"s\":9,\"m\":5");
}

#[test]
fn merge_into_adds_rows_and_sketches_from_another_table() {
    let l = layout();
    let (mut a, mut b) = (AccTable::new(&l), AccTable::new(&l));
    let long = "y".repeat(200);
    let put = |t: &mut AccTable, key: &str, v| {
        add(t, &l, key.as_bytes(), hash_key(key.as_bytes()), v);
    };
    put(&mut a, "x", 1);
    put(&mut a, "x", 2);
    put(&mut a, &long, 7);
    put(&mut b, "x", 2);
    put(&mut b, "y", 3);
    put(&mut b, &long, 8);
    let mut m = AccTable::new(&l);
    for src in [&a, &b] {
        for row in src.rows() {
            m.merge_into(row.hash, row.key(), row.accs, src.sketches(), &l);
        }
    }
    let got: Vec<String> = (0..m.len()).map(|r| fields(&m, &l, r)).collect();
    assert_eq!(
        got,
        [",\"s\":5,\"d\":2", ",\"s\":15,\"d\":2", ",\"s\":3,\"d\":1"]
    );
    assert_eq!(m.rows().nth(1).unwrap().key(), long.as_bytes());
}

/// A table of `n` keys, each `long` of them 200 bytes, with a few values each.
fn filled(l: &AggLayout, n: u64, long_every: u64) -> AccTable {
    let mut t = AccTable::new(l);
    for i in 0..n * 3 {
        let k = i % n;
        let key = if long_every > 0 && k.is_multiple_of(long_every) {
            format!("{k}-{}", "p".repeat(196))
        } else {
            format!("k{k}")
        };
        add(
            &mut t,
            l,
            key.as_bytes(),
            hash_key(key.as_bytes()),
            (i % 11) as i64,
        );
    }
    t
}

#[test]
fn snapshots_round_trip_whole_and_split_by_key_hash() {
    // Every encoding: plain rows copied whole (inline keys, no sketches), row by row because of
    // sketches, row by row because some key is long.
    for (l, long_every) in [
        (plain_layout(), 0),
        (layout(), 0),
        (plain_layout(), 3),
        (layout(), 3),
        (layout(), 1),
    ] {
        let t = filled(&l, 300, long_every);
        let mut e = Enc::default();
        t.encode(&l, &mut e);
        let copied = long_every == 0 && !l.has_sketches();
        assert_eq!(e.bytes[0], u8::from(copied), "row format");
        let mut whole = AccTable::new(&l);
        let mut d = Dec::new(&e.bytes);
        whole.decode(&l, &mut d, &|_| true).unwrap();
        assert!(d.is_empty());
        assert_eq!(contents(&whole, &l), contents(&t, &l), "{long_every}");
        // Restored rows are found again and take more events like any others.
        for row in t.rows().take(10) {
            let key = row.key().to_vec();
            let r = add(&mut whole, &l, &key, row.hash, 0);
            assert_eq!(whole.find_key(row.hash, &key), Some(r));
        }
        assert_eq!(whole.len(), t.len());

        // Two halves by key hash make up the whole, and each holds only its own keys.
        let mut halves = Vec::new();
        for parity in [0, 1] {
            let mut h = AccTable::new(&l);
            let mut d = Dec::new(&e.bytes);
            h.decode(&l, &mut d, &|hash| hash & 1 == parity).unwrap();
            assert!(d.is_empty());
            assert!(h.rows().all(|r| r.hash & 1 == parity));
            halves.extend(contents(&h, &l));
        }
        halves.sort();
        let want = contents(&t, &l);
        assert_eq!(halves, want, "{long_every}");

        // Restoring into a table that already holds one of the keys is corrupt state.
        let mut twice = AccTable::new(&l);
        twice
            .decode(&l, &mut Dec::new(&e.bytes), &|_| true)
            .unwrap();
        let err = twice
            .decode(&l, &mut Dec::new(&e.bytes), &|_| true)
            .unwrap_err();
        assert!(err.contains("twice"), "{err}");
    }
}
