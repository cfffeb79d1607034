//! The record model through the binary: a window keyed on a 200-byte field and a nested path, with
//! eight aggregates over six fields (nested ones among them) and exact decimal sums; and an interval
//! join whose rows with a missing or null key never match (an inner join drops them, a left join
//! emits its own unmatched at once). Expected values are computed here with `rust_decimal`, from
//! the input alone.

mod common;

use common::{read_lines, sluice, toml_str};
use rust_decimal::Decimal;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::str::FromStr;
use std::time::Duration;

const MIN: Duration = Duration::from_secs(60);
const T0: i64 = 1_699_999_980_000;

/// The JSON number token of `field` in `line`, as written (serde_json would round it).
fn token<'a>(line: &'a str, field: &str) -> &'a str {
    let at = line
        .find(&format!("\"{field}\":"))
        .unwrap_or_else(|| panic!("no {field} in {line}"))
        + field.len()
        + 3;
    let rest = &line[at..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    &rest[..end]
}

#[derive(Debug, Default, Clone, PartialEq)]
struct Agg {
    n: u64,
    spend: Decimal,
    cheapest: Option<Decimal>,
    dearest: Option<Decimal>,
    qty: i64,
    users: std::collections::BTreeSet<i64>,
    depth_sum: Decimal,
    tags: std::collections::BTreeSet<i64>,
}

#[test]
fn long_keys_nested_paths_many_aggregates_exact_decimals() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut input = String::new();
    let mut want: BTreeMap<(String, String, i64), Agg> = BTreeMap::new();
    let names: Vec<String> = (0..3).map(|i| format!("{}{i}", "n".repeat(199))).collect();
    let countries = [Some("DE"), Some("FR"), None];
    for i in 0..3000i64 {
        let name = &names[(i % 3) as usize];
        let country = countries[(i / 7 % 3) as usize];
        let price = Decimal::new(10_000 + (i * 7919) % 90_000, 4); // 1.0000 .. 9.9999
        let depth = Decimal::new((i * 31) % 1000, 2); // 0.00 .. 9.99
        let qty = i % 5;
        let user = i % 17;
        let ts = T0 + i * 100;
        let user_obj = match country {
            Some(c) => format!(r#"{{"id":{user},"country":"{c}","geo":{{"depth":{depth}}}}}"#),
            // A missing group-by field is the NULL group.
            None => format!(r#"{{"id":{user},"geo":{{"depth":{depth}}}}}"#),
        };
        let tag = if i % 4 == 0 {
            "null".to_string()
        } else {
            format!("\"t{}\"", i % 3)
        };
        let _ = writeln!(
            input,
            r#"{{"name":"{name}","user":{user_obj},"price":{price},"qty":{qty},"tag":{tag},"ts":{ts}}}"#
        );
        let start = ts - (ts - T0).rem_euclid(60_000);
        let country_key = country.map_or("null".to_string(), |c| format!("\"{c}\""));
        let a = want
            .entry((format!("\"{name}\""), country_key, start))
            .or_default();
        a.n += 1;
        a.spend += price;
        a.cheapest = Some(a.cheapest.map_or(price, |c| c.min(price)));
        a.dearest = Some(a.dearest.map_or(price, |c| c.max(price)));
        a.qty += qty;
        a.users.insert(user);
        a.depth_sum += depth;
        if i % 4 != 0 {
            a.tags.insert(i % 3);
        }
    }
    std::fs::write(d.join("in.ndjson"), &input).unwrap();
    let cfg = format!(
        r#"[runtime]
shards = 3
chunk_bytes = 8192

[sources.ev]
type = "file"
path = {input}
event_time = {{ field = "ts" }}

[transforms.w]
type = "window"
inputs = ["ev"]
group_by = ["name", "user.country"]
window = {{ type = "tumbling", size = "1m" }}
aggregates = {{ n = "count()", spend = "sum(price)", cheapest = "min(price)", dearest = "max(price)", avg_price = "avg(price)", qty = "sum(qty)", users = "count_distinct(user.id)", depth = "sum(user.geo.depth)", tag_kinds = "count_distinct(tag)" }}

[sinks.out]
type = "file"
inputs = ["w"]
path = {out}
"#,
        input = toml_str(&d.join("in.ndjson").to_string_lossy()),
        out = toml_str(&d.join("out.ndjson").to_string_lossy()),
    );
    std::fs::write(d.join("w.toml"), cfg).unwrap();
    let exit = sluice(
        d,
        &["run", "--config", &d.join("w.toml").to_string_lossy()],
        MIN,
    );
    assert!(exit.success, "{}", exit.stderr);
    let lines = read_lines(&d.join("out.ndjson"));
    assert_eq!(lines.len(), want.len(), "one line per (key, window)");
    for line in &lines {
        let v: Value = serde_json::from_str(line).unwrap();
        let name = serde_json::to_string(&v["name"]).unwrap();
        let country = serde_json::to_string(&v["user.country"]).unwrap();
        let start = v["window_start"].as_i64().unwrap();
        let a = &want[&(name, country, start)];
        let dec = |f: &str| Decimal::from_str(token(line, f)).unwrap();
        assert_eq!(v["n"].as_u64(), Some(a.n), "{line}");
        assert_eq!(
            token(line, "spend"),
            a.spend.to_string(),
            "exact, 4 decimals: {line}"
        );
        assert_eq!(dec("cheapest"), a.cheapest.unwrap(), "{line}");
        assert_eq!(dec("dearest"), a.dearest.unwrap(), "{line}");
        let avg = dec("avg_price");
        let exact = a.spend / Decimal::from(a.n);
        assert!(
            (avg - exact).abs() < Decimal::new(1, 20),
            "{line}: avg {avg} vs {exact}"
        );
        assert_eq!(v["qty"].as_i64(), Some(a.qty), "{line}");
        assert_eq!(v["users"].as_u64(), Some(a.users.len() as u64), "{line}");
        assert_eq!(dec("depth"), a.depth_sum, "{line}");
        assert_eq!(
            v["tag_kinds"].as_u64(),
            Some(a.tags.len() as u64),
            "nulls are not values: {line}"
        );
    }
}

#[test]
fn null_join_keys_never_match() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut input = String::new();
    // Left rows (kind a) and right rows (kind b) 1 s apart; every third key missing, every fifth
    // null: those never match, not even each other.
    let key = |i: i64| {
        if i % 3 == 0 {
            String::new()
        } else if i % 5 == 0 {
            r#""k":null,"#.to_string()
        } else {
            format!(r#""k":"{}{i}","#, "x".repeat(190))
        }
    };
    for i in 0..600i64 {
        let ts = T0 + i * 2000;
        let _ = writeln!(input, r#"{{"kind":"a",{}"i":{i},"ts":{ts}}}"#, key(i));
        let _ = writeln!(
            input,
            r#"{{"kind":"b",{}"i":{i},"ts":{}}}"#,
            key(i),
            ts + 1000
        );
    }
    std::fs::write(d.join("in.ndjson"), &input).unwrap();
    let run = |kind: &str| {
        let cfg = format!(
            r#"[runtime]
shards = 2
chunk_bytes = 4096

[sources.ev]
type = "file"
path = {input}
event_time = {{ field = "ts" }}

[transforms.a]
type = "filter"
inputs = ["ev"]
where = "kind == 'a'"

[transforms.b]
type = "filter"
inputs = ["ev"]
where = "kind == 'b'"

[transforms.j]
type = "interval_join"
left = "a"
right = "b"
on = ["k"]
between = ["0s", "1500ms"]
kind = "{kind}"

[sinks.out]
type = "file"
inputs = ["j"]
path = {out}
"#,
            input = toml_str(&d.join("in.ndjson").to_string_lossy()),
            out = toml_str(&d.join(format!("{kind}.ndjson")).to_string_lossy()),
        );
        let path = d.join(format!("{kind}.toml"));
        std::fs::write(&path, cfg).unwrap();
        let exit = sluice(d, &["run", "--config", &path.to_string_lossy()], MIN);
        assert!(exit.success, "{}", exit.stderr);
        read_lines(&d.join(format!("{kind}.ndjson")))
    };
    let null_key = |i: i64| i % 3 == 0 || i % 5 == 0;
    let keyed = (0..600).filter(|&i| !null_key(i)).count();
    let inner = run("inner");
    assert_eq!(inner.len(), keyed, "only rows with a key match");
    for l in &inner {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["left"]["i"], v["right"]["i"], "{l}");
        let k = v["k"].as_str().unwrap();
        assert!(
            k.starts_with(&"x".repeat(190)) && k.len() > 190,
            "the long key, as written"
        );
    }
    let left = run("left");
    assert_eq!(
        left.len(),
        600,
        "every left row once: matched, or unmatched with a NULL key"
    );
    let unmatched = left
        .iter()
        .filter(|l| serde_json::from_str::<Value>(l).unwrap()["right"].is_null())
        .count();
    assert_eq!(unmatched, 600 - keyed);
}
