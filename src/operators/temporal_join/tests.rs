//! The temporal join against a nested-loop reference: for each input row, the table row of the same
//! key with the largest valid-from <= its time, whatever the arrival order within the watermark.
//! Rows travel in the events' payload and are held by value; half the keys are 200 bytes long.

use super::*;
use crate::expr::FieldPath;
use crate::operators::testing::{long_token, Collect, Owned};
use proptest::prelude::*;

/// The join's first port: the input side; the table is the next one.
const FIRST: u16 = 2;

/// (is table row, key, time, id)
type Row = (bool, u8, i64, u64);

/// The key's JSON token: a short string for keys 0 and 1, a 200-byte one from 2 up.
fn key_token(k: u8) -> String {
    if k < 2 {
        format!("\"{k}\"")
    } else {
        long_token(&format!("{k}"), 200)
    }
}

fn record(r: &Row) -> String {
    let (table, key, t, id) = *r;
    let key = key_token(key);
    if table {
        format!(r#"{{"k":{key},"ts":{t},"rate":{id}}}"#)
    } else {
        format!(r#"{{"k":{key},"ts":{t},"order":{id}}}"#)
    }
}

fn event(r: &Row) -> Owned {
    Owned::new(
        FIRST + u16::from(r.0),
        key_token(r.1).as_bytes(),
        r.2,
        &[],
        Some(record(r).as_bytes()),
    )
}

fn join(left: bool) -> TemporalJoin {
    join_with(left, false)
}

fn join_with(left: bool, drop_older_versions: bool) -> TemporalJoin {
    let plan = TemporalJoinPlan {
        on_input: FieldPath::parse("k").unwrap(),
        on_table: FieldPath::parse("k").unwrap(),
        left,
        drop_older_versions,
    };
    TemporalJoin::new(&plan, BuildCtx { first_port: FIRST })
}

fn report(j: &TemporalJoin) -> OperatorReport {
    let mut r = OperatorReport::default();
    j.report(&mut r);
    r
}

/// Feeds rows in the given order with the watermark = max time seen - `ooo`, then ends input.
fn run(rows: &[Row], ooo: i64, left: bool) -> Vec<String> {
    let mut j = join(left);
    let mut out = Collect::default();
    let mut max = i64::MIN;
    let mut wm = i64::MIN;
    for r in rows {
        if max > i64::MIN && max - ooo > wm {
            wm = max - ooo;
            j.on_watermark(wm, &mut out);
        }
        j.on_event(&event(r).rec(), wm, &mut out);
        max = max.max(r.2);
    }
    j.on_watermark(i64::MAX, &mut out);
    out.sorted()
}

/// Nested loop: every input row with the table row of its key valid at its time.
fn reference(rows: &[Row], left: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for r in rows.iter().filter(|r| !r.0) {
        // Latest valid-from <= t; among equal valid-froms, the later arrival.
        let version = rows
            .iter()
            .enumerate()
            .filter(|(_, v)| v.0 && v.1 == r.1 && v.2 <= r.2)
            .max_by_key(|(vi, v)| (v.2, *vi));
        let body = record(r);
        let body = &body[..body.len() - 1];
        match version {
            Some((_, v)) => lines.push(format!("{body},\"table\":{}}}", record(v))),
            None if left => lines.push(format!("{body},\"table\":null}}")),
            None => {}
        }
    }
    lines.sort();
    lines
}

#[test]
fn each_order_takes_the_rate_valid_at_its_time() {
    let rows = [
        (true, 1, 100, 10), // rate 10 from t=100
        (false, 1, 150, 1), // order at 150 -> rate 10
        (true, 1, 200, 20), // rate 20 from t=200
        (false, 1, 199, 2), // order at 199 (out of order) -> rate 10
        (false, 1, 250, 3), // -> rate 20
        (false, 0, 120, 4), // key 0 has no rate yet: left -> null, inner -> nothing
        (true, 0, 130, 30), // rate for key 0 from 130
        (false, 0, 140, 5), // -> 30
    ];
    let inner = run(&rows, 200, false);
    assert_eq!(inner, reference(&rows, false));
    assert!(inner.contains(
        &"{\"k\":\"1\",\"ts\":199,\"order\":2,\"table\":{\"k\":\"1\",\"ts\":100,\"rate\":10}}"
            .to_string()
    ));
    assert_eq!(inner.len(), 4);
    let left = run(&rows, 200, true);
    assert_eq!(left, reference(&rows, true));
    assert!(left.contains(&"{\"k\":\"0\",\"ts\":120,\"order\":4,\"table\":null}".to_string()));
}

#[test]
fn a_tombstone_version_ends_its_keys_validity_until_the_next_version() {
    let mut j = join(true);
    let mut out = Collect::default();
    let table = |t: i64, row: &str| Owned::new(FIRST + 1, b"\"1\"", t, &[], Some(row.as_bytes()));
    let order = |t: i64, id: u64| {
        let row = format!(r#"{{"k":"1","ts":{t},"order":{id}}}"#);
        Owned::new(FIRST, b"\"1\"", t, &[], Some(row.as_bytes()))
    };
    j.on_event(
        &table(100, r#"{"k":"1","rate":10}"#).rec(),
        i64::MIN,
        &mut out,
    );
    j.on_event(
        &table(200, r#"{"_kafka":{"tombstone":true},"k":"1","ts":200}"#).rec(),
        i64::MIN,
        &mut out,
    );
    j.on_event(
        &table(300, r#"{"k":"1","rate":30}"#).rec(),
        i64::MIN,
        &mut out,
    );
    for (t, id) in [(150, 1), (250, 2), (199, 3), (200, 4), (350, 5)] {
        j.on_event(&order(t, id).rec(), i64::MIN, &mut out);
    }
    j.on_watermark(i64::MAX, &mut out);
    let rate = |id: u64| {
        out.lines
            .iter()
            .find(|l| l.contains(&format!("\"order\":{id},")))
            .map(|l| l.split("\"table\":").nth(1).unwrap().to_string())
    };
    assert_eq!(rate(1).as_deref(), Some(r#"{"k":"1","rate":10}}"#));
    assert_eq!(rate(3).as_deref(), Some(r#"{"k":"1","rate":10}}"#));
    assert_eq!(rate(4).as_deref(), Some("null}"), "deleted from t=200 on");
    assert_eq!(rate(2).as_deref(), Some("null}"));
    assert_eq!(rate(5).as_deref(), Some(r#"{"k":"1","rate":30}}"#));
}

#[test]
fn a_late_version_is_dropped_and_counted_and_changes_no_answer() {
    // ooo 0: the order at 150 is answered when the watermark passes 150 (rate 10); a rate from 120
    // arriving after that is late and must not be used.
    let rows = [
        (true, 1, 100, 10),
        (false, 1, 150, 1),
        (false, 1, 300, 2),
        (true, 1, 120, 99),
    ];
    let mut j = join(false);
    let mut out = Collect::default();
    let mut wm = i64::MIN;
    for r in &rows {
        j.on_event(&event(r).rec(), wm, &mut out);
        if r.2 > wm {
            wm = r.2;
            j.on_watermark(wm, &mut out);
        }
    }
    j.on_watermark(i64::MAX, &mut out);
    assert_eq!(report(&j).late_dropped, 1);
    assert_eq!(out.late, [120]);
    assert_eq!(out.late_rows, [Some(record(&rows[3]).into_bytes())]);
    assert!(
        out.lines.iter().all(|l| l.contains("\"rate\":10")),
        "{:?}",
        out.lines
    );
}

#[test]
fn a_late_input_whose_version_is_gone_gets_null_in_a_left_join_and_is_dropped_in_an_inner() {
    // Versions at 100 and 200; the watermark reaches 250, which prunes the version from 100.
    // Then an input row at 150 arrives: late, and the version valid at 150 is gone. An input row
    // at 220 is late too, but the version valid then (200) is still held: answered with it.
    let rows = [(true, 1, 100, 10), (true, 1, 200, 20), (false, 1, 250, 1)];
    for left in [false, true] {
        let mut j = join(left);
        let mut out = Collect::default();
        for r in &rows {
            j.on_event(&event(r).rec(), 0, &mut out);
        }
        j.on_watermark(250, &mut out);
        let gone = (false, 1, 150, 2);
        let held = (false, 1, 220, 3);
        j.on_event(&event(&gone).rec(), 250, &mut out);
        j.on_event(&event(&held).rec(), 250, &mut out);
        j.on_watermark(i64::MAX, &mut out);
        let with = |r: &Row, rate: Option<&Row>| {
            let input = record(r);
            let table = rate.map_or("null".to_string(), record);
            format!("{},\"table\":{table}}}", &input[..input.len() - 1])
        };
        let mut want = vec![with(&rows[2], Some(&rows[1])), with(&held, Some(&rows[1]))];
        if left {
            want.insert(1, with(&gone, None));
        }
        assert_eq!(out.lines, want, "left {left}");
        assert_eq!(report(&j).late_dropped, u64::from(!left), "left {left}");
        assert_eq!(
            out.late,
            if left { vec![] } else { vec![150] },
            "left {left}"
        );
        assert_eq!(report(&j).rows.unwrap().late, [2, 0], "left {left}");
    }
}

#[test]
fn a_null_key_never_matches_left_gets_null_at_once_inner_drops_it() {
    // A table version and an input row both keyed `null` (a missing key field): equal bytes, but
    // SQL NULL matches nothing; the version is not even held.
    let version = Owned::new(FIRST + 1, b"null", 100, &[], Some(br#"{"rate":1}"#)).null_key();
    let input = Owned::new(FIRST, b"null", 150, &[], Some(br#"{"order":1}"#)).null_key();
    for left in [false, true] {
        let mut j = join(left);
        let mut out = Collect::default();
        j.on_event(&version.rec(), 0, &mut out);
        j.on_event(&input.rec(), 0, &mut out);
        if left {
            // Answered on arrival: no version can ever match it, so there is nothing to wait for.
            assert_eq!(out.lines, [r#"{"order":1,"table":null}"#]);
            assert_eq!(out.emitted[0].cause, Some(150));
        } else {
            assert!(out.lines.is_empty());
        }
        let r = report(&j);
        let rows = r.rows.unwrap();
        assert_eq!(rows.null_keys, 2);
        assert_eq!(rows.buffered, [0, 0]);
        j.on_watermark(i64::MAX, &mut out);
        assert_eq!(out.lines.len(), usize::from(left));
    }
}

#[test]
fn held_rows_round_trip_through_a_snapshot_by_value() {
    // A version larger than a row page and one with escapes and non-ASCII text, and a waiting
    // input row with whitespace around it: exactly these bytes come back from the snapshot.
    let big = format!(r#"{{"blob":"{}"}}"#, "z".repeat(100_000));
    let odd = r#"{"s":"é \"q\" \\ ✓","n":[1,{"x":null}]}"#.to_string();
    let key = long_token("cur", 200);
    let mut a = join(true);
    let mut out = Collect::default();
    let v1 = Owned::new(FIRST + 1, key.as_bytes(), 10, &[], Some(big.as_bytes()));
    let v2 = Owned::new(FIRST + 1, key.as_bytes(), 20, &[], Some(odd.as_bytes()));
    let waiting = Owned::new(FIRST, key.as_bytes(), 15, &[], Some(b" {\"order\":1}\n"));
    for e in [&v1, &v2, &waiting] {
        a.on_event(&e.rec(), 0, &mut out);
    }
    let mut state = Enc::default();
    a.snapshot(&mut state);
    drop(a);
    let mut b = join(true);
    b.restore(&state.bytes, &|_| true, 0).unwrap();
    let later = Owned::new(FIRST, key.as_bytes(), 25, &[], Some(b"{\"order\":2}"));
    b.on_event(&later.rec(), 0, &mut out);
    b.on_watermark(i64::MAX, &mut out);
    assert_eq!(
        out.lines,
        [
            format!(r#"{{"order":1,"table":{big}}}"#),
            format!(r#"{{"order":2,"table":{odd}}}"#),
        ]
    );
}

proptest! {
    /// Within the watermark bound, arrival order does not change the result: any shuffle whose
    /// rows arrive no later than `ooo` behind the largest time seen gives the reference answer.
    #[test]
    fn order_insensitive_within_the_bound_and_equal_to_the_nested_loop(
        raw in proptest::collection::vec((any::<bool>(), 0u8..4, 0i64..400, 0u64..1000), 1..60),
        jitter in proptest::collection::vec(0i64..50, 60),
        left in any::<bool>(),
    ) {
        // Arrival order: by time plus a jitter below the bound.
        let mut order: Vec<usize> = (0..raw.len()).collect();
        order.sort_by_key(|&i| (raw[i].2 + jitter[i], i));
        let mut rows: Vec<Row> = order.iter().map(|&i| raw[i]).collect();
        // Versions with equal valid-from resolve by arrival: keep them distinct here.
        let mut seen = std::collections::HashSet::new();
        rows.retain(|r| !r.0 || seen.insert((r.1, r.2)));
        prop_assert_eq!(run(&rows, 50, left), reference(&rows, left));
    }

    /// Snapshot mid-way, restore (whole, or split in two by key hash), continue: same output. The
    /// rows held at the cut come back from the snapshot alone, by value.
    #[test]
    fn restored_state_continues_exactly(
        raw in proptest::collection::vec((any::<bool>(), 0u8..4, 0i64..400, 0u64..1000), 1..60),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut rows = raw;
        rows.sort_by_key(|r| r.2);
        let cut = cut.index(rows.len() + 1);
        let feed = |j: &mut TemporalJoin, out: &mut Collect, from: usize, to: usize, wm: &mut i64, keep: &dyn Fn(u64) -> bool| {
            for r in rows.iter().take(to).skip(from) {
                let e = event(r);
                if keep(e.ev.hash) {
                    j.on_event(&e.rec(), *wm, out);
                }
                if r.2 - 1 > *wm {
                    *wm = r.2 - 1;
                    j.on_watermark(*wm, out);
                }
            }
        };
        let mut a = join(true);
        let mut out_a = Collect::default();
        let mut wm = i64::MIN;
        feed(&mut a, &mut out_a, 0, cut, &mut wm, &|_| true);
        let mut state = Enc::default();
        a.snapshot(&mut state);
        let before = out_a.lines.len();
        let mut wm_a = wm;
        feed(&mut a, &mut out_a, cut, rows.len(), &mut wm_a, &|_| true);
        a.on_watermark(i64::MAX, &mut out_a);
        let mut want: Vec<String> = out_a.lines[before..].to_vec();
        want.sort();
        let mut got = Vec::new();
        for parity in [0u64, 1] {
            let keep = move |h: u64| h & 1 == parity;
            let mut b = join(true);
            b.restore(&state.bytes, &keep, wm).unwrap();
            let mut out_b = Collect::default();
            let mut wm_b = wm;
            feed(&mut b, &mut out_b, cut, rows.len(), &mut wm_b, &keep);
            b.on_watermark(i64::MAX, &mut out_b);
            got.extend(out_b.lines);
        }
        got.sort();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn a_keep_last_table_drops_a_version_older_than_its_keys_latest() {
    // Arrival order: key 1's version at 200 comes before its version at 150 (within the
    // watermark bound). Kept, the order at 180 takes the version from 150; as Flink's
    // ROW_NUMBER keep-last view, the version from 150 was never the key's last row, so the order
    // takes the one from 100. A version at the latest's own time still replaces it.
    let rows: [Row; 6] = [
        (true, 1, 100, 10),
        (true, 1, 200, 20),
        (true, 1, 150, 15),
        (true, 1, 200, 21),
        (false, 1, 180, 1),
        (false, 1, 210, 2),
    ];
    let feed = |j: &mut TemporalJoin| {
        let mut out = Collect::default();
        for r in &rows {
            j.on_event(&event(r).rec(), i64::MIN, &mut out);
        }
        j.on_watermark(i64::MAX, &mut out);
        out.sorted()
    };
    let kept = feed(&mut join_with(false, false));
    assert_eq!(kept, reference(&rows, false));
    let mut keep_last = join_with(false, true);
    let dropped = feed(&mut keep_last);
    let without: Vec<Row> = rows.iter().copied().filter(|r| r.3 != 15).collect();
    assert_eq!(dropped, reference(&without, false));
    assert!(
        dropped[0].contains("\"order\":1,\"table\":{\"k\":\"1\",\"ts\":100"),
        "{dropped:?}"
    );
    assert!(dropped[1].contains("\"rate\":21"), "{dropped:?}");
    assert_eq!(keep_last.join.superseded, 1);
}
