//! OVER aggregations ordered by the event-time attribute (Flink's `OVER (PARTITION BY ... ORDER
//! BY rowtime <frame>)`), through the real binary on 1, 2 and 3 shards: ROWS n PRECEDING, RANGE
//! INTERVAL PRECEDING, and the unbounded frames (with and without PARTITION BY), with COUNT(*),
//! COUNT/SUM/AVG/MIN/MAX of a nullable column, a WHERE before the window, NULL and missing
//! partition keys, out-of-order rows within the watermark's bound, rows of equal time in one
//! partition (ordered by their place in the file; peers of a RANGE frame share their values),
//! duplicate lines and clearly late rows (no output row, counted as late). Each job's output, one
//! row per accepted input row, must equal as a multiset what a plain Vec/BTreeMap model in this
//! file computes from the input; a small case is worked out by hand, so that a model bug cannot
//! hide an engine bug; OVER windows Flink refuses (ordered by a non-time column, FOLLOWING) are
//! refused before running. Late rows here are far behind every partition's last row, so Flink's
//! two lateness rules (behind the watermark for an unbounded frame, at or behind the partition's
//! last taken row for a bounded one) agree on them; where the rules differ is covered by the
//! operator's model proptest (`src/operators/over_agg/tests.rs`).

mod common;

use common::sql::{run_job, sql_job};
use common::{read_lines, sluice};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// 2023-11-14 22:13:20 UTC.
const B: i64 = 1_700_000_000_000;
/// The watermark's declared delay: `dt - INTERVAL '1' SECOND`.
const DELAY: i64 = 1_000;

#[derive(Clone, Debug)]
struct Bid {
    auction: Option<i64>,
    bidder: i64,
    price: Option<i64>,
    ts: i64,
}

/// An output row: its BIGINT columns in the sink table's order (None for JSON null).
type Row = Vec<Option<i64>>;

/// A bid as a JSON line; a NULL auction or price is written as `null`, or left out if `omit_*`.
fn line(b: &Bid, omit_auction: bool, omit_price: bool) -> String {
    let field = |name: &str, v: Option<i64>, omit: bool| match (omit, v) {
        (true, _) => String::new(),
        (_, Some(v)) => format!("\"{name}\":{v},"),
        (_, None) => format!("\"{name}\":null,"),
    };
    let (a, p) = (
        field("auction", b.auction, omit_auction),
        field("price", b.price, omit_price),
    );
    format!("{{{a}\"bidder\":{},{p}\"ts\":{}}}\n", b.bidder, b.ts)
}

/// 4 000 bids over about two minutes, written to `d/bid.ndjson` in the returned (file) order:
/// auctions 0..8, 3% with `"auction":null` and 3% without the field, 8% without a price (null or
/// missing), 15% up to 900 ms behind the clock (within the 1 s bound, never on it), 25% of clock
/// steps of 0 ms (equal times), 4% a repeated auction and time with a new price (peers), 2%
/// identical repeated lines, and every 300th row 15-25 s behind the clock (clearly late).
fn generate(d: &Path) -> Vec<Bid> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: u64| -> i64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n) as i64
    };
    let (mut clock, mut text, mut bids) = (B, String::new(), Vec::<Bid>::new());
    let mut last_line = String::new();
    for i in 0..4000 {
        if i > 0 && next(100) < 2 {
            text.push_str(&last_line);
            bids.push(bids.last().unwrap().clone());
            continue;
        }
        clock += next(4) * next(40);
        let peer = i > 0 && next(100) < 4;
        let (auction_roll, price_roll) = (next(100), next(100));
        let auction = match auction_roll {
            _ if peer => bids.last().unwrap().auction,
            0..=5 => None,
            _ => Some(next(8)),
        };
        let price = (price_roll >= 8).then(|| 1 + next(1000));
        let ts = if peer {
            bids.last().unwrap().ts
        } else if i % 300 == 150 {
            clock - 15_000 - next(10_000)
        } else if next(100) < 15 {
            clock - 1 - next(900)
        } else {
            clock
        };
        let b = Bid {
            auction,
            bidder: next(6),
            price,
            ts,
        };
        let auction_missing = !peer && auction_roll >= 3 && auction.is_none();
        last_line = line(&b, auction_missing, price_roll < 2);
        text.push_str(&last_line);
        bids.push(b);
    }
    std::fs::write(d.join("bid.ndjson"), text).unwrap();
    bids
}

/// Whether each bid is late: at or below the watermark on arrival, the watermark being the
/// largest time read before it minus the delay (one file: one source partition, read in order).
fn late(bids: &[Bid]) -> Vec<bool> {
    let mut max = i64::MIN;
    bids.iter()
        .map(|b| {
            let late = max != i64::MIN && b.ts <= max - DELAY;
            max = max.max(b.ts);
            late
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Frame {
    Rows(usize),
    RangeMs(i64),
    RowsUnbounded,
    RangeUnbounded,
}

/// The aggregates of one frame: COUNT(*), COUNT(price), SUM, AVG (truncated), MAX, MIN.
struct Aggs {
    n: i64,
    c: i64,
    sum: Option<i64>,
    avg: Option<i64>,
    max: Option<i64>,
    min: Option<i64>,
}

fn aggs(rows: &[&Bid]) -> Aggs {
    let prices: Vec<i64> = rows.iter().filter_map(|b| b.price).collect();
    let sum = (!prices.is_empty()).then(|| prices.iter().sum::<i64>());
    Aggs {
        n: rows.len() as i64,
        c: prices.len() as i64,
        sum,
        avg: sum.map(|s| s / prices.len() as i64),
        max: prices.iter().copied().max(),
        min: prices.iter().copied().min(),
    }
}

/// Each accepted bid (not late, `keep`) with the aggregates of its frame: per partition (the
/// auction, NULL its own; or one partition) in (time, file position) order; and how many bids
/// `keep` keeps are late.
fn model(
    bids: &[Bid],
    keep: impl Fn(&Bid) -> bool,
    partitioned: bool,
    frame: Frame,
) -> (Vec<(Bid, Aggs)>, usize) {
    let late = late(bids);
    let late_kept = bids
        .iter()
        .zip(&late)
        .filter(|(b, l)| **l && keep(b))
        .count();
    let mut parts: BTreeMap<Option<i64>, Vec<&Bid>> = BTreeMap::new();
    for (b, _) in bids.iter().zip(&late).filter(|(b, l)| !**l && keep(b)) {
        let key = if partitioned { b.auction } else { None };
        parts.entry(key).or_default().push(b);
    }
    let mut out = Vec::new();
    for rows in parts.values_mut() {
        rows.sort_by_key(|b| b.ts); // stable: ties stay in file order
        for (i, b) in rows.iter().enumerate() {
            let frame_rows: Vec<&Bid> = match frame {
                Frame::Rows(n) => rows[i.saturating_sub(n)..=i].to_vec(),
                Frame::RowsUnbounded => rows[..=i].to_vec(),
                Frame::RangeMs(k) => rows
                    .iter()
                    .filter(|o| o.ts >= b.ts - k && o.ts <= b.ts)
                    .copied()
                    .collect(),
                Frame::RangeUnbounded => rows.iter().filter(|o| o.ts <= b.ts).copied().collect(),
            };
            out.push(((*b).clone(), aggs(&frame_rows)));
        }
    }
    (out, late_kept)
}

fn bid_table(d: &Path, file: &str) -> String {
    format!(
        "CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, ts BIGINT,
  dt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR dt AS dt - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');\n",
        d.join(file).display()
    )
}

fn out_table(d: &Path, name: &str, cols: &[&str]) -> String {
    let cols: Vec<String> = cols.iter().map(|c| format!("{c} BIGINT")).collect();
    format!(
        "CREATE TABLE {name} ({}) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');\n",
        cols.join(", "),
        d.join(name).display()
    )
}

/// A job's config in `d` on `shards` shards.
fn config(d: &Path, sql: &str, shards: usize) -> String {
    let cfg = sql_job(d, sql, "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("shards = 2", &format!("shards = {shards}")),
    )
    .unwrap();
    cfg
}

/// The rows of sink `name` in `d`, each as its `cols` in order, sorted; every line must hold
/// exactly these keys, each an integer or null.
fn read_rows(d: &Path, name: &str, cols: &[&str]) -> Vec<Row> {
    let mut rows: Vec<Row> = read_lines(&d.join(name).join("part-0.json"))
        .iter()
        .map(|l| {
            let v: serde_json::Map<String, Value> =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert_eq!(v.len(), cols.len(), "{l}");
            cols.iter()
                .map(|c| match v.get(*c) {
                    Some(Value::Null) => None,
                    Some(n) => Some(n.as_i64().unwrap_or_else(|| panic!("{c} in {l}"))),
                    None => panic!("no {c} in {l}"),
                })
                .collect()
        })
        .collect();
    rows.sort();
    rows
}

/// An output row: the bid's auction, price and ts, then `aggs`.
fn row(b: &Bid, aggs: &[Option<i64>]) -> Row {
    [b.auction, b.price, Some(b.ts)]
        .iter()
        .chain(aggs)
        .copied()
        .collect()
}

/// Runs `INSERT INTO out <select>` over the generated bids on 1, 2 and 3 shards; each run's rows
/// must be the model's for the bids that `keep` keeps, over `frame` (per auction or not), with
/// `aggs` of each frame after the bid's columns, and its summary must count the late rows kept.
fn check(
    keep: impl Fn(&Bid) -> bool + Copy,
    partitioned: bool,
    frame: Frame,
    select: &str,
    cols: &[&str],
    aggs: impl Fn(&Aggs) -> Vec<Option<i64>>,
) {
    let bids = generated_bids();
    let (model, late) = model(&bids, keep, partitioned, frame);
    let mut want: Vec<Row> = model.iter().map(|(b, a)| row(b, &aggs(a))).collect();
    want.sort();
    for shards in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        generate(d);
        let sql = format!(
            "{}{}INSERT INTO out {select};",
            bid_table(d, "bid.ndjson"),
            out_table(d, "out", cols)
        );
        let exit = run_job(d, &config(d, &sql, shards));
        let got = read_rows(d, "out", cols);
        let ctx = format!("{shards} shard(s)");
        assert_eq!(got.len(), want.len(), "{ctx}: one row per accepted bid");
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "{ctx}: first difference (sorted) at {i}: got {:?}, want {:?}",
                got[i], want[i]
            );
        }
        assert!(
            exit.stderr.contains(&format!(" {late} late dropped")),
            "{ctx}: model {late} late\n{}",
            exit.stderr
        );
    }
}

/// The generated data has what the tests claim: NULL keys, NULL prices, peers, disorder, late.
fn generated_bids() -> Vec<Bid> {
    let dir = tempfile::tempdir().unwrap();
    let bids = generate(dir.path());
    let text = std::fs::read_to_string(dir.path().join("bid.ndjson")).unwrap();
    assert!(text.contains("\"auction\":null") && text.lines().any(|l| !l.contains("auction")));
    assert!(text.contains("\"price\":null") && text.lines().any(|l| !l.contains("price")));
    let lines: Vec<&str> = text.lines().collect();
    let dups = lines.windows(2).filter(|w| w[0] == w[1]).count();
    let peers = bids
        .windows(2)
        .filter(|w| w[0].ts == w[1].ts && w[0].auction == w[1].auction && w[0].price != w[1].price)
        .count();
    let behind = bids.windows(2).filter(|w| w[1].ts < w[0].ts).count();
    let late = late(&bids).iter().filter(|l| **l).count();
    assert!(
        dups > 20 && peers > 50 && behind > 300 && (10..40).contains(&late),
        "{dups} duplicates, {peers} peers, {behind} behind, {late} late"
    );
    bids
}

#[test]
fn rows_three_preceding_counts_sums_and_extremes_per_auction() {
    let select = "SELECT auction, price, ts,
  COUNT(*) OVER w, SUM(price) OVER w, MAX(price) OVER w, MIN(price) OVER w
FROM bid
WINDOW w AS (PARTITION BY auction ORDER BY dt ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)";
    let cols = ["auction", "price", "ts", "n", "total", "hi", "lo"];
    check(
        |_| true,
        true,
        Frame::Rows(3),
        select,
        &cols,
        |a| vec![Some(a.n), a.sum, a.max, a.min],
    );
}

#[test]
fn range_two_seconds_preceding_after_a_where_counts_sums_and_averages() {
    let over = "OVER (PARTITION BY auction ORDER BY dt
    RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW)";
    let select = format!(
        "SELECT auction, price, ts, COUNT(price) {over} AS c, SUM(price) {over} AS total,
  AVG(price) {over} AS mean
FROM bid WHERE bidder <> 3"
    );
    let cols = ["auction", "price", "ts", "c", "total", "mean"];
    let keep = |b: &Bid| b.bidder != 3;
    check(keep, true, Frame::RangeMs(2_000), &select, &cols, |a| {
        vec![Some(a.c), a.sum, a.avg]
    });
}

#[test]
fn unbounded_frames_with_and_without_partitions() {
    let cols = ["auction", "price", "ts", "n", "hi"];
    let aggs = |a: &Aggs| vec![Some(a.n), a.max];
    // No frame = RANGE UNBOUNDED PRECEDING: peers (equal time) all see each other.
    let select = "SELECT auction, price, ts, COUNT(*) OVER (ORDER BY dt) AS n,
  MAX(price) OVER (ORDER BY dt) AS hi FROM bid";
    check(|_| true, false, Frame::RangeUnbounded, select, &cols, aggs);
    let select = "SELECT auction, price, ts, COUNT(*) OVER w AS n, MAX(price) OVER w AS hi FROM bid
WINDOW w AS (PARTITION BY auction ORDER BY dt ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)";
    check(|_| true, true, Frame::RowsUnbounded, select, &cols, aggs);
}

/// Rows of a table written out by hand: whitespace-separated integers, `N` for NULL, the third
/// column in ms after B; sorted.
fn table(text: &str) -> Vec<Row> {
    let mut rows: Vec<Row> = text
        .lines()
        .map(|l| {
            let mut r: Row = l.split_whitespace().map(|x| x.parse().ok()).collect();
            r[2] = r[2].map(|t| B + t);
            r
        })
        .collect();
    rows.sort();
    rows
}

/// 13 bids worked out by hand: auction 1 has a row out of order (2000 after 2500), a NULL price
/// and two peers at 4000; auction 2 a late row (900 when the watermark is 4000 - 1000); auction 3
/// only a NULL price; the NULL partition a `null` and a missing (`-`) auction.
#[test]
fn a_hand_worked_case_gives_the_rows_written_out_here() {
    // auction, price, ms after B; in file order.
    let small = "1 10 1000  2 5 1500  1 20 2500  1 7 2000  1 null 3000  null 4 3200  3 null 3300
        - 2 3600  1 30 4000  1 1 4000  2 8 900  1 6 6500  2 9 6000";
    let (mut text, mut bids) = (String::new(), Vec::new());
    for l in small.split_whitespace().collect::<Vec<_>>().chunks(3) {
        let (auction, price, ts) = (
            l[0].parse().ok(),
            l[1].parse().ok(),
            B + l[2].parse::<i64>().unwrap(),
        );
        let b = Bid {
            auction,
            bidder: 0,
            price,
            ts,
        };
        text.push_str(&line(&b, l[0] == "-", false));
        bids.push(b);
    }
    // RANGE 2 s: auction, price, ts, COUNT(*), COUNT(price), SUM, AVG (17 / 2 = 8, 58 / 4 = 14);
    // the peers at 4000 each see the other (and 7 at 2000).
    let range_cols = ["auction", "price", "ts", "n", "c", "total", "mean"];
    let range_want = table(
        "1 10 1000 1 1 10 10
         1  7 2000 2 2 17  8
         1 20 2500 3 3 37 12
         1  N 3000 4 3 37 12
         1 30 4000 5 4 58 14
         1  1 4000 5 4 58 14
         1  6 6500 1 1  6  6
         2  5 1500 1 1  5  5
         2  9 6000 1 1  9  9
         3  N 3300 1 0  N  N
         N  4 3200 1 1  4  4
         N  2 3600 2 2  6  3",
    );
    // ROWS 1 PRECEDING: auction, price, ts, COUNT(*), SUM, MIN; the peers in file order.
    let rows_cols = ["auction", "price", "ts", "n", "total", "lo"];
    let rows_want = table(
        "1 10 1000 1 10 10
         1  7 2000 2 17  7
         1 20 2500 2 27  7
         1  N 3000 2 20 20
         1 30 4000 2 30 30
         1  1 4000 2 31  1
         1  6 6500 2  7  1
         2  5 1500 1  5  5
         2  9 6000 2 14  5
         3  N 3300 1  N  N
         N  4 3200 1  4  4
         N  2 3600 2  6  2",
    );
    // The model agrees with the hand (a check of the model, not of the engine).
    let model_rows = |frame, aggs: &dyn Fn(&Aggs) -> Vec<Option<i64>>| {
        let (m, _) = model(&bids, |_| true, true, frame);
        let mut m: Vec<Row> = m.iter().map(|(b, a)| row(b, &aggs(a))).collect();
        m.sort();
        m
    };
    let range = model_rows(Frame::RangeMs(2000), &|a| {
        vec![Some(a.n), Some(a.c), a.sum, a.avg]
    });
    assert_eq!(range, range_want, "model (RANGE)");
    let rows = model_rows(Frame::Rows(1), &|a| vec![Some(a.n), a.sum, a.min]);
    assert_eq!(rows, rows_want, "model (ROWS)");

    let rows1 = "OVER (PARTITION BY auction ORDER BY dt ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)";
    for shards in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("small.ndjson"), &text).unwrap();
        let sql = format!(
            "{}{}{}INSERT INTO by_range SELECT auction, price, ts,
  COUNT(*) OVER w, COUNT(price) OVER w, SUM(price) OVER w, AVG(price) OVER w
FROM bid WINDOW w AS (PARTITION BY auction ORDER BY dt
  RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW);
INSERT INTO by_rows SELECT auction, price, ts,
  COUNT(*) {rows1}, SUM(price) {rows1}, MIN(price) {rows1}
FROM bid;",
            bid_table(d, "small.ndjson"),
            out_table(d, "by_range", &range_cols),
            out_table(d, "by_rows", &rows_cols)
        );
        run_job(d, &config(d, &sql, shards));
        let ctx = format!("{shards} shard(s)");
        assert_eq!(read_rows(d, "by_range", &range_cols), range_want, "{ctx}");
        assert_eq!(read_rows(d, "by_rows", &rows_cols), rows_want, "{ctx}");
    }
}

/// Runs `select` into `out` and expects a refusal before any row is written, its message
/// holding one of `words`.
fn assert_refused(select: &str, words: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("bid.ndjson"),
        format!("{{\"auction\":1,\"bidder\":0,\"price\":5,\"ts\":{B}}}\n"),
    )
    .unwrap();
    let sql = format!(
        "{}{}INSERT INTO out {select};",
        bid_table(d, "bid.ndjson"),
        out_table(d, "out", &["auction", "n"])
    );
    let cfg = config(d, &sql, 2);
    let exit = sluice(d, &["run", "--config", &cfg], Duration::from_secs(60));
    assert!(!exit.success, "{select}: ran\n{}", exit.stderr);
    let upper = exit.stderr.to_uppercase();
    assert!(
        words.iter().any(|w| upper.contains(w)),
        "{select}:\n{}",
        exit.stderr
    );
    assert!(
        read_lines(&d.join("out").join("part-0.json")).is_empty(),
        "{select}"
    );
}

#[test]
fn over_windows_not_ordered_by_time_or_reaching_following_rows_are_refused() {
    assert_refused(
        "SELECT auction, COUNT(*) OVER (PARTITION BY auction ORDER BY price
  ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM bid",
        &["OVER", "ORDER BY", "TIME ATTRIBUTE"],
    );
    assert_refused(
        "SELECT auction, COUNT(*) OVER (PARTITION BY auction ORDER BY dt
  ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM bid",
        &["OVER", "FOLLOWING"],
    );
}
