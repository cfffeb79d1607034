//! Filters and selects through the real binary: a hand-worked orders file gives exactly the
//! select, filter, window and dead-letter lines worked out below (exact decimals with their SQL
//! scale, nulls, the original bytes of a line a filter keeps, the byte offset of a bad line); on
//! 20 000 seeded orders every `amount * rate` printed is the product computed here with
//! `rust_decimal`, and a filter over it keeps exactly the orders whose exact product is >= 1000;
//! bad expressions and fields a select does not output are refused by `validate`, naming the key;
//! and `kill -9` + restart of a checkpointed filter -> select job loses and repeats no line.

mod common;

use common::flow_job::newest_checkpoint;
use common::{read_lines, sluice, toml_str, BASE, BIN};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MIN: Duration = Duration::from_secs(60);

/// `[sources.orders]` reading `file` (ms event time in `ts`, no out-of-orderness allowed).
fn orders_source(file: &Path) -> String {
    format!(
        "[sources.orders]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
         event_time = {{ field = \"ts\", unit = \"ms\" }}\n\
         watermark = {{ max_out_of_orderness = \"0s\" }}\n\n",
        toml_str(&file.to_string_lossy())
    )
}

fn sink(name: &str, input: &str, path: &Path) -> String {
    let path = toml_str(&path.to_string_lossy());
    format!("[sinks.{name}]\ntype = \"file\"\ninputs = [\"{input}\"]\npath = {path}\n\n")
}

/// Writes `toml` to `dir/name.toml` and returns the path as an argument.
fn write_config(dir: &Path, name: &str, toml: &str) -> String {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    path.to_string_lossy().into_owned()
}

fn run_ok(dir: &Path, cfg: &str) {
    let exit = sluice(dir, &["run", "--config", cfg], MIN * 2);
    assert!(exit.success, "sluice run failed; stderr:\n{}", exit.stderr);
}

fn sorted_lines(p: &Path) -> Vec<String> {
    let mut v = read_lines(p);
    v.sort();
    v
}

/// The raw text of the number after `"key":` in a compact JSON line (serde_json would make a
/// decimal an f64).
fn raw_number<'a>(line: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\":");
    let Some(at) = line.find(&pat) else {
        panic!("no {pat} in {line}")
    };
    let rest = &line[at + pat.len()..];
    &rest[..rest.find([',', '}']).unwrap_or(rest.len())]
}

fn parse(line: impl AsRef<str>) -> Value {
    serde_json::from_str(line.as_ref()).unwrap()
}

fn id_of(line: &str) -> usize {
    raw_number(line, "order_id").parse().unwrap()
}

const PRICED: &str = "[transforms.priced_usd]\ntype = \"select\"\ninputs = [\"orders\"]\nfields = \
    { order_id = \"order_id\", currency = \"currency\", ts = \"ts\", amount_usd = \"amount * rate\" }\n\n";
const BIG: &str = "[transforms.big_orders]\ntype = \"filter\"\ninputs = [\"priced_usd\"]\n\
    where = \"amount_usd >= 1000 && currency != 'JPY'\"\n\n";
const WINDOW: &str = "[transforms.per_currency]\ntype = \"window\"\ninputs = [\"priced_usd\"]\n\
    group_by = [\"currency\"]\nwindow = { type = \"tumbling\", size = \"1m\" }\n\
    aggregates = { orders = \"count()\", total = \"sum(amount_usd)\" }\n\n";

#[test]
fn hand_worked_orders_give_exact_select_filter_window_and_dead_letter_lines() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = |ms: i64| BASE + ms;
    let order = |id: i64, cur: &str, amount_rate: &str, ms: i64| {
        let ts = t(ms);
        format!(r#"{{"order_id":{id},"currency":"{cur}",{amount_rate},"ts":{ts}}}"#)
    };
    let lines = [
        // Spaces kept: a filter directly over the source must write these very bytes.
        order(1, "EUR", r#""amount":999.99,"rate":1.083421"#, 1_000)
            .replace(',', ", ")
            .replace(':', ": "),
        order(2, "GBP", r#""amount":2000,"rate":1.27"#, 5_000),
        // Out of order (the watermark is at 5 s, the minute is not due yet): still counted.
        order(3, "JPY", r#""amount":500000,"rate":0.0067"#, 3_000),
        order(4, "EUR", r#""amount":"lots","rate":1.08"#, 6_000),
        order(5, "USD", r#""amount":1500"#, 7_000),
        order(6, "USD", r#""amount":700,"rate":1"#, 2_000),
        order(7, "USD", r#""amount":1200,"rate":1"#, 9_000),
        order(8, "EUR", r#""amount":19.99,"rate":1.083421"#, 61_000),
    ];
    let input = d.join("orders.ndjson");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let [all, big, eur, win, dead] =
        ["all", "big", "eur", "win", "dead"].map(|n| d.join(format!("{n}.ndjson")));
    let toml = format!(
        "[runtime]\nshards = 2\n\n{}{PRICED}{BIG}{WINDOW}[transforms.eur_only]\ntype = \"filter\"\n\
         inputs = [\"orders\"]\nwhere = \"currency == 'EUR'\"\n\n{}{}{}{}[dead_letter]\npath = {}\n",
        orders_source(&input),
        sink("all", "priced_usd", &all),
        sink("big", "big_orders", &big),
        sink("eur", "eur_only", &eur),
        sink("win", "per_currency", &win),
        toml_str(&dead.to_string_lossy()),
    );
    run_ok(d, &write_config(d, "orders", &toml));

    // 999.99 * 1.083421 = 1083.41016579; 2000 * 1.27 = 2540.00 (scale 2); 500000 * 0.0067 =
    // 3350.0000; no rate: null; int * int stays an int. Order 4 fails and is in no output.
    let sel = |id: i64, cur: &str, ms: i64, usd: &str| {
        let ts = t(ms);
        format!(r#"{{"order_id":{id},"currency":"{cur}","ts":{ts},"amount_usd":{usd}}}"#)
    };
    let want_all = [
        sel(1, "EUR", 1_000, "1083.41016579"),
        sel(2, "GBP", 5_000, "2540.00"),
        sel(3, "JPY", 3_000, "3350.0000"),
        sel(5, "USD", 7_000, "null"),
        sel(6, "USD", 2_000, "700"),
        sel(7, "USD", 9_000, "1200"),
        sel(8, "EUR", 61_000, "21.65758579"),
    ];
    assert_eq!(sorted_lines(&all), want_all);
    // >= 1000 and not JPY: orders 1, 2 and 7 (3 is JPY, 5 is null, 6 and 8 are small).
    let want_big = [0, 1, 5].map(|i| want_all[i].clone());
    assert_eq!(sorted_lines(&big), want_big);
    // A filter over the source writes the original lines, the one with a bad amount included.
    let mut want_eur = vec![lines[0].clone(), lines[3].clone(), lines[7].clone()];
    want_eur.sort();
    assert_eq!(sorted_lines(&eur), want_eur);

    // The last line of a (currency, first minute), the upsert log's final value.
    let win_lines = read_lines(&win);
    let last_of = |cur: &str| -> Value {
        let mut rows = win_lines
            .iter()
            .map(parse)
            .filter(|v| v["currency"] == cur && v["window_start"] == BASE);
        rows.next_back()
            .unwrap_or_else(|| panic!("no {cur} line in {win_lines:?}"))
    };
    // USD: orders 5 (null amount_usd: counted, adds nothing), 6 and 7; integers sum exactly.
    let usd = json!({"currency": "USD", "window_start": BASE, "window_end": BASE + 60_000,
                     "orders": 3, "total": 1900});
    assert_eq!(last_of("USD"), usd, "{win_lines:?}");
    // EUR: only order 1 (order 4 is a dead letter); a decimal sum, compared within a tolerance.
    let eur_row = last_of("EUR");
    assert_eq!(eur_row["orders"], 1, "{win_lines:?}");
    let total = eur_row["total"].as_f64().unwrap();
    assert!((total - 1083.41016579).abs() < 1e-6, "{win_lines:?}");

    // The bad line, at the byte offset of its first byte, with the stage, field, expression,
    // column, the type met and the input field it came from: once, though two chains read it.
    let offset: usize = lines[..3].iter().map(|l| l.len() + 1).sum();
    let dead_lines = read_lines(&dead);
    assert_eq!(dead_lines.len(), 1, "{dead_lines:?}");
    let v = parse(&dead_lines[0]);
    assert_eq!(v["raw"], lines[3].as_str(), "{v}");
    assert_eq!(v["offset"], offset, "{v}");
    assert_eq!(v["source"], "orders", "{v}");
    let partition = v["partition"].as_str().unwrap();
    assert!(partition.ends_with("orders.ndjson"), "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains(
            "select `priced_usd`, field `amount_usd`: `amount * rate` at column 1: \
             `*` needs a number, got string (in field `amount`)"
        ),
        "{v}"
    );
}

/// splitmix64: a seeded generator with no extra crate.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// `units / 10^scale` as JSON number text with exactly `scale` fraction digits (`1250.50`, `7`).
fn fixed(units: u64, scale: u32) -> String {
    let p = 10u64.pow(scale);
    match scale {
        0 => units.to_string(),
        _ => format!("{}.{:0w$}", units / p, units % p, w = scale as usize),
    }
}

fn fraction_digits(text: &str) -> usize {
    text.split_once('.').map_or(0, |(_, f)| f.len())
}

/// Runs select `amount_usd = amount * rate` over orders `(amount, rate)` (order_id = index) into
/// one sink, and filter `amount_usd >= 1000` over it into another: (select lines, filter lines).
fn priced(dir: &Path, pairs: &[(String, String)]) -> (Vec<String>, Vec<String>) {
    let input = dir.join("orders.ndjson");
    let text: String = pairs
        .iter()
        .enumerate()
        .map(|(i, (a, r))| {
            format!("{{\"order_id\":{i},\"amount\":{a},\"rate\":{r},\"ts\":{BASE}}}\n")
        })
        .collect();
    std::fs::write(&input, text).unwrap();
    let (all, big) = (dir.join("all.ndjson"), dir.join("big.ndjson"));
    let toml = format!(
        "[runtime]\nshards = 2\nchunk_bytes = 4096\n\n{}[transforms.priced]\ntype = \"select\"\n\
         inputs = [\"orders\"]\nfields = {{ order_id = \"order_id\", amount_usd = \"amount * rate\" }}\n\n\
         [transforms.big]\ntype = \"filter\"\ninputs = [\"priced\"]\nwhere = \"amount_usd >= 1000\"\n\n{}{}",
        orders_source(&input),
        sink("all_out", "priced", &all),
        sink("big_out", "big", &big),
    );
    run_ok(dir, &write_config(dir, "priced", &toml));
    (read_lines(&all), read_lines(&big))
}

#[test]
fn every_generated_product_is_exact_and_the_filter_keeps_exactly_the_products_of_1000_or_more() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5EED_0D3B);
    // Hand-picked edges around 1000 first (ids 0-3 are exactly 1000, 4-9 just below or tiny).
    let edges = "1000*1 1250.00*0.8 3125*0.32 400*2.500000 999.99*1 3124.99*0.32 999.99*1.00001 \
                 0.01*0.000001 0*1.5 1000.00*0.999999";
    let mut pairs: Vec<(String, String)> = (edges.split(' '))
        .map(|e| e.split_once('*').unwrap())
        .map(|(a, r)| (a.to_string(), r.to_string()))
        .collect();
    while pairs.len() < 20_000 {
        let (a_scale, r_scale) = (rng.below(3) as u32, rng.below(7) as u32);
        let amount = fixed(rng.below(500_000 * 10u64.pow(a_scale)), a_scale);
        pairs.push((amount, fixed(rng.below(3 * 10u64.pow(r_scale)), r_scale)));
    }
    let (all, big) = priced(dir.path(), &pairs);
    assert_eq!(all.len(), pairs.len(), "one line per order");
    let mut seen = vec![false; pairs.len()];
    let mut want_big = BTreeSet::new();
    for line in &all {
        let id = id_of(line);
        assert!(!std::mem::replace(&mut seen[id], true), "order {id} twice");
        let (a, r) = &pairs[id];
        let exact = Decimal::from_str_exact(a).unwrap() * Decimal::from_str_exact(r).unwrap();
        let got = raw_number(line, "amount_usd");
        let ctx = format!("order {id}: {a} * {r}: {line}");
        assert_eq!(Decimal::from_str_exact(got).ok(), Some(exact), "{ctx}");
        // The scale is the sum of the operands' (as SQL); two integers give an integer. (A zero
        // product's scale is pinned by its own test below.)
        if !exact.is_zero() {
            let scale = fraction_digits(a) + fraction_digits(r);
            assert_eq!(fraction_digits(got), scale, "{ctx}");
        }
        let only_listed = format!("{{\"order_id\":{id},\"amount_usd\":{got}}}");
        assert_eq!(*line, only_listed, "only the listed fields, in order");
        if exact >= Decimal::from(1000) {
            want_big.insert(id);
        }
    }
    let got_big: Vec<usize> = big.iter().map(|l| id_of(l)).collect();
    assert_eq!(got_big.len(), want_big.len(), "a kept order twice?");
    assert_eq!(got_big.into_iter().collect::<BTreeSet<_>>(), want_big);
    assert!((0..4).all(|i| want_big.contains(&i)) && (4..10).all(|i| !want_big.contains(&i)));
    let n = want_big.len();
    assert!(n > 1000 && n < 19_000, "{n}");
}

#[test]
fn a_zero_product_keeps_its_sql_scale() {
    // As in SQL (`SELECT 0 * 1.5` is `0.0`) and as `2.50 * 2` is `5.00`: the scale is the sum of
    // the operands' scales, for a zero product too; two integers give an integer.
    let cases = [
        ("0", "1.5", "0.0"),
        ("0.00", "1.5", "0.000"),
        ("0", "0", "0"),
        ("2.50", "2", "5.00"),
    ];
    let pairs: Vec<(String, String)> = cases.iter().map(|c| (c.0.into(), c.1.into())).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut got = priced(dir.path(), &pairs).0;
    got.sort();
    let want: Vec<String> = (cases.iter().enumerate())
        .map(|(i, c)| format!("{{\"order_id\":{i},\"amount_usd\":{}}}", c.2))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn validate_refuses_bad_expressions_and_fields_a_select_does_not_output_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("orders.ndjson");
    std::fs::write(&input, "").unwrap();
    let good = format!(
        "{}{PRICED}{BIG}{WINDOW}{}{}",
        orders_source(&input),
        sink("big_out", "big_orders", &d.join("big.ndjson")),
        sink("win_out", "per_currency", &d.join("win.ndjson")),
    );
    let good_cfg = write_config(d, "good", &good);
    let ok = sluice(d, &["validate", "--config", &good_cfg], MIN);
    assert!(ok.success, "the base config is valid: {}", ok.stderr);
    // Each case changes one thing in the valid config.
    #[rustfmt::skip]
    let cases = [
        ("1000 && currency", "1000 && || currency", "transforms.big_orders.where", "invalid expression", Some("|| currency")),
        ("amount * rate", "amount * frobnicate(rate)", "transforms.priced_usd.fields.amount_usd", "unknown function `frobnicate`", Some("frobnicate")),
        ("group_by = [\"currency\"]", "group_by = [\"country\"]", "transforms.per_currency.group_by[0]", "`country`", None),
        ("sum(amount_usd)", "sum(amount)", "transforms.per_currency.aggregates.total", "`amount`", None),
        // Over window results a filter reads the window's fields: `amount_usd` is not one.
        ("inputs = [\"priced_usd\"]\nwhere", "inputs = [\"per_currency\"]\nwhere", "transforms.big_orders.where", "but window `per_currency` has no field `amount_usd`", None),
    ];
    for (from, to, key, says, caret_at) in cases {
        assert_eq!(good.matches(from).count(), 1, "{from}");
        let cfg = write_config(d, "bad", &good.replacen(from, to, 1));
        let exit = sluice(d, &["validate", "--config", &cfg], MIN);
        let err = &exit.stderr;
        assert!(!exit.success, "{key}: accepted; {}", exit.stdout);
        assert!(err.contains(&format!("{key}:")), "{err}");
        assert!(err.contains(says), "{err}");
        // The line after the quoted expression has a `^` under the first byte of `caret_at`.
        if let Some(token) = caret_at {
            let lines: Vec<&str> = err.lines().collect();
            let quoted = |l: &&str| l.contains(token) && !l.contains(key);
            let i = lines.iter().position(quoted).expect("a quoted line");
            let caret = lines.get(i + 1).copied().unwrap_or_default();
            assert_eq!(caret.trim(), "^", "{err}");
            assert_eq!(caret.find('^'), lines[i].find(token), "{err}");
        }
    }
}

/// Generator -> filter `bid >= 300` -> select -> file sink; `name` picks output, state and config.
fn crash_config(dir: &Path, name: &str, checkpointed: bool) -> String {
    let state = toml_str(&dir.join(format!("{name}-state")).to_string_lossy());
    let ckpt = match checkpointed {
        true => format!("[checkpoint]\ndir = {state}\ninterval = \"10ms\"\nretain = 3\n"),
        false => String::new(),
    };
    let toml = format!(
        "[runtime]\nshards = 2\nchunk_bytes = 65536\n\n\
         [sources.clicks]\ntype = \"generator\"\ncount = 1000000\n\n\
         [transforms.pricey]\ntype = \"filter\"\ninputs = [\"clicks\"]\nwhere = \"bid >= 300\"\n\n\
         [transforms.doubled]\ntype = \"select\"\ninputs = [\"pricey\"]\n\
         fields = {{ ad = \"ad_id\", doubled = \"bid * 2\", ts = \"ts\" }}\n\n{}{ckpt}",
        sink("out", "doubled", &dir.join(format!("{name}.ndjson"))),
    );
    write_config(dir, name, &toml)
}

#[test]
fn kill_9_and_restart_of_a_checkpointed_filter_select_job_writes_every_line_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run_ok(d, &crash_config(d, "plain", false));
    let want = sorted_lines(&d.join("plain.ndjson"));
    // bid is uniform in 10..=10000, so about 290/9991 = 2.9% of the events are dropped.
    let n = want.len();
    assert!((960_000..980_000).contains(&n), "{n}");
    for line in &want {
        let v = parse(line);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["ad", "doubled", "ts"], "{line}");
        assert!(v["ad"].as_str().unwrap().starts_with("ad-"), "{line}");
        let doubled = v["doubled"].as_i64().unwrap();
        assert!(doubled % 2 == 0 && doubled >= 600, "{line}");
    }

    let cfg = crash_config(d, "crash", true);
    let state = d.join("crash-state");
    let mut resumed = 0;
    // Each start is killed 40, 80, 150 ms after it completed a checkpoint of its own, so every
    // restart has something to resume from; then the last start runs to the end.
    for (i, delay_ms) in [40u64, 80, 150].into_iter().enumerate() {
        let before = newest_checkpoint(&state);
        let err = d.join(format!("crash-stderr-{i}.txt"));
        let mut child = Command::new(BIN)
            .args(["run", "--config", &cfg])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        let started = Instant::now();
        // (A start that ends first, having finished the job, is fine: the next resumes from it.)
        while newest_checkpoint(&state) <= before
            && started.elapsed() < MIN
            && child.try_wait().unwrap().is_none()
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL: no flush, no final checkpoint
        let _ = child.wait();
        let text = std::fs::read_to_string(&err).unwrap();
        resumed += usize::from(text.contains("resuming from checkpoint"));
    }
    let last = sluice(d, &["run", "--config", &cfg], MIN * 2);
    assert!(last.success, "{}", last.stderr);
    resumed += usize::from(last.stderr.contains("resuming from checkpoint"));
    assert_eq!(resumed, 3, "every restart resumes from a checkpoint");
    let got = sorted_lines(&d.join("crash.ndjson"));
    let w: BTreeSet<&String> = want.iter().collect();
    let g: BTreeSet<&String> = got.iter().collect();
    let missing: Vec<&&String> = w.difference(&g).take(3).collect();
    let extra: Vec<&&String> = g.difference(&w).take(3).collect();
    assert!(missing.is_empty(), "missing {missing:?}");
    assert!(extra.is_empty(), "never in an uninterrupted run: {extra:?}");
    assert_eq!(got.len(), want.len(), "some lines were written twice");
    assert!(got == want, "same lines, same multiplicities");
}

/// Filters and selects over window results: a filter keeps result lines as they are (a HAVING),
/// a select reshapes them; with a late event re-firing a window, every emitted result goes through
/// (the line that no longer passes is simply not written: no retraction).
#[test]
fn filters_and_selects_over_window_results_work_like_having_and_a_projection() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = d.join("orders.ndjson");
    // EUR: 3 orders in minute 0; USD: 1 in minute 0, then one late (ts 59 000 after 61 000, allowed
    // by 5 s of lateness) that re-fires USD's minute 0 with 2 orders.
    let lines = [
        r#"{"order_id":1,"currency":"EUR","amount":10,"rate":1,"ts":1000}"#,
        r#"{"order_id":2,"currency":"EUR","amount":20,"rate":1,"ts":2000}"#,
        r#"{"order_id":3,"currency":"USD","amount":5,"rate":1,"ts":3000}"#,
        r#"{"order_id":4,"currency":"EUR","amount":30,"rate":1,"ts":4000}"#,
        r#"{"order_id":5,"currency":"GBP","amount":1,"rate":1,"ts":61000}"#,
        r#"{"order_id":6,"currency":"USD","amount":7,"rate":1,"ts":59000}"#,
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let window = WINDOW.replace("aggregates =", "allowed_lateness = \"5s\"\naggregates =");
    let toml = format!(
        "{}{PRICED}{window}\
         [transforms.busy]\ntype = \"filter\"\ninputs = [\"per_currency\"]\nwhere = \"orders >= 2\"\n\n\
         [transforms.brief]\ntype = \"select\"\ninputs = [\"per_currency\"]\n\
         fields = {{ cur = \"lower(currency)\", at = \"format_time(window_start)\", n = \"orders\" }}\n\n{}{}",
        orders_source(&input),
        sink("busy_out", "busy", &d.join("busy.ndjson")),
        sink("brief_out", "brief", &d.join("brief.ndjson")),
    );
    let cfg = write_config(d, "having", &toml);
    run_ok(d, &cfg);
    let base = "\"window_start\":0,\"window_end\":60000";
    assert_eq!(
        sorted_lines(&d.join("busy.ndjson")),
        vec![
            format!("{{\"currency\":\"EUR\",{base},\"orders\":3,\"total\":60}}"),
            format!("{{\"currency\":\"USD\",{base},\"orders\":2,\"total\":12}}"),
        ],
        "EUR's and the re-fired USD window pass; USD's first firing (1 order) and GBP do not"
    );
    assert_eq!(
        sorted_lines(&d.join("brief.ndjson")),
        vec![
            r#"{"cur":"eur","at":"1970-01-01T00:00:00.000Z","n":3}"#.to_string(),
            r#"{"cur":"gbp","at":"1970-01-01T00:01:00.000Z","n":1}"#.to_string(),
            r#"{"cur":"usd","at":"1970-01-01T00:00:00.000Z","n":1}"#.to_string(),
            r#"{"cur":"usd","at":"1970-01-01T00:00:00.000Z","n":2}"#.to_string(),
        ]
    );
}

/// A window over a plain select (renamed, nested and escaped fields, missing ones, a filter before
/// it) binds straight from the source line: its results must equal a hand-computed count and sum
/// per renamed key, and the same job with one selected field computed (`bid + 0`, which cannot
/// bind through) must print the same lines.
#[test]
fn a_window_over_a_plain_select_binds_through_it_with_the_same_results() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = d.join("clicks.ndjson");
    let mut text = String::new();
    let mut want: std::collections::BTreeMap<(String, i64), (u64, i64)> = Default::default();
    let mut want_all = want.clone();
    for i in 0..3000i64 {
        let ts = BASE + i * 97;
        let country = ["de", "fr", "\\u0064e", "it"][(i % 4) as usize];
        let bid = (i * 37) % 200 - 20;
        let user = if i % 11 == 0 {
            String::new()
        } else {
            format!(",\"user\":{{\"country\":\"{country}\"}}")
        };
        text += &format!("{{\"ts\":{ts},\"bid\":{bid}{user}}}\n");
        // `\u0064e` is "de" spelt with an escape: one group; no user is the NULL group.
        let key = match (i % 11, country) {
            (0, _) => "null".to_string(),
            (_, "\\u0064e") => "de".to_string(),
            (_, c) => c.to_string(),
        };
        let w = (key, ts - (ts - BASE).rem_euclid(60_000));
        for (map, keep) in [(&mut want, bid > 0), (&mut want_all, true)] {
            if keep {
                let e = map.entry(w.clone()).or_insert((0, 0));
                e.0 += 1;
                e.1 += bid;
            }
        }
    }
    std::fs::write(&data, text).unwrap();
    // With the filter the select binds through after it; without, the readers become the
    // source's own (one pass over the line).
    let job = |name: &str, money: &str, filter: bool| {
        let (input, filter) = match filter {
            true => ("paid", "[transforms.paid]\ntype = \"filter\"\ninputs = [\"orders\"]\nwhere = \"bid > 0\"\n\n"),
            false => ("orders", ""),
        };
        let out = d.join(format!("{name}.ndjson"));
        let cfg = d.join(format!("{name}.toml"));
        std::fs::write(
            &cfg,
            format!(
                "{}{filter}[transforms.renamed]\ntype = \"select\"\ninputs = [\"{input}\"]\n\
                 fields = {{ country = \"user.country\", money = \"{money}\", ts = \"ts\" }}\n\n\
                 [transforms.w]\ntype = \"window\"\ninputs = [\"renamed\"]\ngroup_by = [\"country\"]\n\
                 window = {{ type = \"tumbling\", size = \"1m\" }}\naggregates = {{ n = \"count()\", s = \"sum(money)\" }}\n\n\
                 [sinks.out]\ntype = \"file\"\ninputs = [\"w\"]\npath = {}\n",
                orders_source(&data),
                toml_str(&out.to_string_lossy())
            ),
        )
        .unwrap();
        let exit = sluice(d, &["run", "--config", &cfg.to_string_lossy()], MIN);
        assert!(exit.success, "{name}: {}", exit.stderr);
        let mut lines = read_lines(&out);
        lines.sort();
        lines
    };
    let sums = |lines: &[String]| {
        let mut got: std::collections::BTreeMap<(String, i64), (u64, i64)> = Default::default();
        for l in lines {
            let v: Value = serde_json::from_str(l).unwrap();
            let key = match &v["country"] {
                Value::Null => "null".to_string(),
                c => c.as_str().unwrap().to_string(),
            };
            let w = (key, v["window_start"].as_i64().unwrap());
            got.insert(w, (v["n"].as_u64().unwrap(), v["s"].as_i64().unwrap()));
        }
        got
    };
    let plain = job("plain", "bid", true);
    assert_eq!(
        sums(&plain),
        want,
        "plain select: counts and sums per renamed key"
    );
    assert_eq!(
        plain,
        job("computed", "bid + 0", true),
        "bound through or not, the same lines"
    );
    let folded = job("folded", "bid", false);
    assert_eq!(sums(&folded), want_all, "select straight over the source");
    assert_eq!(folded, job("computed_all", "bid + 0", false));
}

/// An element a select takes out of an array is read from the select's output (bindings do not
/// index arrays), so a window over it runs and groups by it.
#[test]
fn a_window_over_an_array_element_a_select_took_out_groups_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = d.join("orders.ndjson");
    std::fs::write(
        &data,
        format!(
            "{{\"ts\":{},\"items\":[\"a\",\"b\"],\"bid\":1}}\n{{\"ts\":{},\"items\":[\"a\"],\"bid\":2}}\n\
             {{\"ts\":{},\"items\":[\"c\"],\"bid\":3}}\n",
            BASE + 1000,
            BASE + 2000,
            BASE + 90_000
        ),
    )
    .unwrap();
    let out = d.join("out.ndjson");
    let cfg = d.join("job.toml");
    std::fs::write(
        &cfg,
        format!(
            "{}[transforms.sel]\ntype = \"select\"\ninputs = [\"orders\"]\n\
             fields = {{ first = \"items[0]\", bid = \"bid\", ts = \"ts\" }}\n\n\
             [transforms.w]\ntype = \"window\"\ninputs = [\"sel\"]\ngroup_by = [\"first\"]\n\
             window = {{ type = \"tumbling\", size = \"1m\" }}\naggregates = {{ n = \"count()\", s = \"sum(bid)\" }}\n\n\
             [sinks.out]\ntype = \"file\"\ninputs = [\"w\"]\npath = {}\n",
            orders_source(&data),
            toml_str(&out.to_string_lossy())
        ),
    )
    .unwrap();
    let exit = sluice(d, &["run", "--config", &cfg.to_string_lossy()], MIN);
    assert!(exit.success, "{}", exit.stderr);
    let got: Vec<(String, u64, i64)> = read_lines(&out)
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let first = v["first"].as_str().unwrap().to_string();
            (first, v["n"].as_u64().unwrap(), v["s"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(got, vec![("a".to_string(), 2, 3), ("c".to_string(), 1, 3)]);
}

/// A sink may read a source as it is, beside a filter over the same source: it writes every
/// line as read, bytes unchanged, from any shard count (this wrote nothing before the fix).
#[test]
fn a_sink_reading_a_source_writes_every_line_as_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lines: Vec<String> = (0..2_000)
        .map(|i| format!(r#"{{"id":{i},"amount":{}, "ts":{}}}"#, i % 7, BASE + i * 10))
        .collect();
    std::fs::write(d.join("orders.ndjson"), lines.join("\n") + "\n").unwrap();
    let toml = format!(
        "[runtime]\nshards = 2\nchunk_bytes = 4096\n\n{}[transforms.big]\ntype = \"filter\"\ninputs = [\"orders\"]\nwhere = \"amount > 3\"\n\n{}{}",
        orders_source(&d.join("orders.ndjson")),
        sink("all", "orders", &d.join("all.ndjson")),
        sink("some", "big", &d.join("some.ndjson")),
    );
    let cfg = write_config(d, "direct", &toml);
    run_ok(d, &cfg);
    let mut want = lines.clone();
    want.sort();
    assert_eq!(sorted_lines(&d.join("all.ndjson")), want);
    let big: Vec<&String> = lines
        .iter()
        .filter(|l| parse(l.as_str())["amount"].as_i64().unwrap() > 3)
        .collect();
    assert_eq!(read_lines(&d.join("some.ndjson")).len(), big.len());
}
