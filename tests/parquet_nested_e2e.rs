//! Nested values through the Parquet sink and the real binary, read back with DuckDB: objects
//! become structs and arrays lists (DuckDB queries `user.geo.cc` and `items[1].price`), with
//! exact decimals inside, nulls and missing fields as nulls, empty lists kept apart from null
//! ones; a column pinned `json` stays JSON text; a later row whose nested value does not fit the
//! inferred shape goes to the dead letters naming the column and the path within it. The
//! expectation is computed from the generated events with serde_json, independently of the sink.

mod common;

use common::duckdb::duckdb;
use common::{sluice, toml_str, SplitMix, BASE};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// One item as the test expects it back: (sku, price text with 2 decimals, qty or null).
type Item = (String, String, Option<i64>);

/// What one kept event must read back as.
#[derive(Debug, Clone, PartialEq, Default)]
struct Row {
    user_id: Option<i64>,
    name: Option<String>,
    cc: Option<String>,
    zip: Option<i64>,
    /// `None`: a null list.
    items: Option<Vec<Item>>,
    raw: String,
}

/// `n` events with nested users and item lists (some null, some missing fields), the rows a
/// filter keeping `id % 5 != 3` passes, and the ids of the events that do not fit (a user id
/// given as text after the first rows fixed it as an integer).
fn events(d: &Path, n: u64) -> (String, Vec<(u64, Row)>, Vec<u64>) {
    let mut rng = SplitMix(23);
    let mut text = String::new();
    let mut want = Vec::new();
    let mut bad = Vec::new();
    for id in 0..n {
        let ts = BASE + id as i64;
        let mut row = Row::default();
        let user = match rng.next() % 6 {
            0 => Value::Null,
            1 => {
                row.user_id = Some(id as i64 * 3);
                json!({ "id": id * 3 })
            }
            _ => {
                let cc = ["DE", "FR", "US", "BR"][(rng.next() % 4) as usize];
                row.user_id = Some(id as i64 * 3);
                row.name = Some(format!("user \"{id}\" é"));
                row.cc = Some(cc.into());
                let mut geo = json!({ "cc": cc });
                if rng.next().is_multiple_of(2) {
                    row.zip = Some((rng.next() % 99_999) as i64);
                    geo["zip"] = json!(row.zip);
                }
                json!({ "id": id * 3, "name": row.name, "geo": geo })
            }
        };
        let items = if rng.next().is_multiple_of(7) {
            Value::Null
        } else {
            let mut list = Vec::new();
            let mut got = Vec::new();
            for k in 0..rng.next() % 4 {
                let cents = rng.next() % 100_000;
                let sku = format!("sku-{id}-{k}");
                let price = format!("{}.{:02}", cents / 100, cents % 100);
                let qty = (!rng.next().is_multiple_of(3)).then(|| (rng.next() % 9) as i64);
                let item = format!(
                    "{{\"sku\":\"{sku}\",\"price\":{price}{}}}",
                    qty.map_or(String::new(), |q| format!(",\"qty\":{q}"))
                );
                list.push(item);
                got.push((sku, price, qty));
            }
            row.items = Some(got);
            Value::String(format!("[{}]", list.join(",")))
        };
        let items_text = match &items {
            Value::String(s) => s.clone(),
            _ => "null".into(),
        };
        let raw = json!({ "a": id, "b": [id % 3] }).to_string();
        row.raw = raw.clone();
        let user_text = if id == n - 10 {
            bad.push(id);
            json!({ "id": "not-a-number" }).to_string()
        } else {
            user.to_string()
        };
        text.push_str(&format!(
            "{{\"ts\":{ts},\"id\":{id},\"user\":{user_text},\"items\":{items_text},\"raw\":{raw}}}\n"
        ));
        if id % 5 != 3 && !bad.contains(&id) {
            want.push((id, row));
        }
    }
    let path = d.join("nested.ndjson");
    std::fs::write(&path, text).unwrap();
    (path.to_string_lossy().into_owned(), want, bad)
}

fn config(d: &Path, input: &str, out: &Path) -> String {
    let t = format!(
        "[runtime]\nshards = 2\nchunk_bytes = 65536\n\n\
         [sources.ev]\ntype = \"file\"\npath = {}\nformat = \"json\"\n\
         event_time = {{ field = \"ts\", unit = \"ms\" }}\n\
         watermark = {{ max_out_of_orderness = \"1s\", idle_timeout = \"30s\" }}\n\n\
         [transforms.kept]\ntype = \"filter\"\ninputs = [\"ev\"]\nwhere = \"id % 5 != 3\"\n\n\
         [sinks.history]\ntype = \"parquet\"\ninputs = [\"kept\"]\npath = {}\n\
         columns = {{ raw = \"json\" }}\n\n\
         [dead_letter]\npath = {}\n",
        toml_str(input),
        toml_str(&out.to_string_lossy()),
        toml_str(&d.join("dead.ndjson").to_string_lossy()),
    );
    let p = d.join("nested.toml");
    std::fs::write(&p, t).unwrap();
    p.to_string_lossy().into_owned()
}

fn opt<T: std::str::FromStr>(s: &str) -> Option<T> {
    (!s.is_empty()).then(|| s.parse().ok()).flatten()
}

#[test]
fn objects_are_structs_arrays_are_lists_and_a_value_that_does_not_fit_is_a_dead_letter() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (input, want, bad) = events(d, 6_000);
    let out = d.join("out");
    let cfg = config(d, &input, &out);
    let r = sluice(d, &["run", "--config", &cfg], Duration::from_secs(120));
    assert!(r.success, "{}", r.stderr);
    let glob = out.join("part-*.parquet").display().to_string();

    let types = duckdb(&format!(
        "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('{glob}'))"
    ))
    .unwrap();
    let ty = |n: &str| {
        let t = types.iter().find(|t| t[0] == n);
        t.map_or_else(|| panic!("no column {n}: {types:?}"), |t| t[1].clone())
    };
    // Fields in first-seen order: serde_json writes the users' keys sorted.
    assert_eq!(
        ty("user"),
        "STRUCT(geo STRUCT(cc VARCHAR, zip BIGINT), id BIGINT, \"name\" VARCHAR)"
    );
    assert_eq!(
        ty("items"),
        "STRUCT(sku VARCHAR, price DECIMAL(38,2), qty BIGINT)[]"
    );
    assert_eq!(ty("raw"), "VARCHAR");

    let rows = duckdb(&format!(
        "SELECT id, user.id, user.name, user.geo.cc, user.geo.zip, items IS NULL, len(items), raw \
         FROM read_parquet('{glob}') ORDER BY id"
    ))
    .unwrap();
    let items = duckdb(&format!(
        "SELECT id, i, items[i].sku, CAST(items[i].price AS VARCHAR), items[i].qty \
         FROM read_parquet('{glob}') t, range(1, coalesce(len(t.items), 0) + 1) r(i) ORDER BY id, i"
    ))
    .unwrap();
    let mut got_items = items[1..].iter().peekable();
    let mut got = Vec::new();
    for r in &rows[1..] {
        let id: u64 = r[0].parse().unwrap();
        let mut list = Vec::new();
        while let Some(it) = got_items.next_if(|it| it[0] == r[0]) {
            list.push((it[2].clone(), it[3].clone(), opt(&it[4])));
        }
        let row = Row {
            user_id: opt(&r[1]),
            name: opt(&r[2]),
            cc: opt(&r[3]),
            zip: opt(&r[4]),
            items: (r[5] == "False").then_some(list),
            raw: r[7].clone(),
        };
        if let Some(items) = &row.items {
            assert_eq!(r[6], items.len().to_string(), "id {id}");
        }
        got.push((id, row));
    }
    assert!(got_items.next().is_none());
    assert_eq!(got.len(), want.len(), "kept rows");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
    // JSON text keeps the value as written.
    let raw: Value = serde_json::from_str(&want[1].1.raw).unwrap();
    assert_eq!(raw["b"], json!([1]));

    let dead = common::read_lines(&d.join("dead.ndjson"));
    assert_eq!(dead.len(), bad.len(), "{dead:?}");
    let v: Value = serde_json::from_str(&dead[0]).unwrap();
    let reason = v["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("parquet sink `history`")
            && reason.contains("column `user`")
            && reason.contains("at `.id`")
            && reason.contains("not an integer"),
        "{reason}"
    );
    let line: Value = serde_json::from_str(v["raw"].as_str().unwrap()).unwrap();
    assert_eq!(line["id"], json!(bad[0]));
}
