//! Regular joins without a state TTL through the real binary, on 1, 2 and 3 shards: LEFT and FULL
//! OUTER joins (NULL-padded rows emitted and taken back as matches arrive), an inner join of two
//! append-only tables into a plain JSON file, a GROUP BY over a join in one SELECT, and a join
//! that reads an updating result (a GROUP BY view). Orders and customers are read from two
//! files at whatever pace the shards take them, so the changelogs differ from run to run; each
//! sink's changelog, applied in order, must give exactly the table a model written here
//! computes from the two files (duplicate customer rows, NULL and missing keys, customers
//! without orders and orders without customers included).

mod common;

use common::changelog::materialise_debezium;
use common::read_lines;
use common::sql::{debezium_file, run_job, sql_job};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

struct Order {
    id: i64,
    customer: Option<i64>,
    amount: i64,
}

struct Customer {
    id: Option<i64>,
    tier: &'static str,
}

const TIERS: [&str; 3] = ["gold", "silver", "bronze"];

/// 2 000 orders of customers 0..30 and 40..45 (some without a customer), and customers 0..40 with
/// customers 5 and 6 listed twice (under two tiers, and twice under one) and two without an id.
fn data(d: &Path) -> (Vec<Order>, Vec<Customer>) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut orders = Vec::new();
    let mut text = String::new();
    for id in 0..2000 {
        let r = next();
        let customer = match r % 40 {
            0 => None,
            k if k < 35 => Some(((r >> 8) % 30) as i64),
            _ => Some(40 + ((r >> 8) % 5) as i64),
        };
        let amount = 1 + ((r >> 20) % 100) as i64;
        let field = match (customer, id % 2) {
            (Some(c), _) => format!(r#""customer":{c},"#),
            (None, 0) => r#""customer":null,"#.to_string(),
            (None, _) => String::new(),
        };
        text.push_str(&format!(r#"{{"order_id":{id},{field}"amount":{amount}}}"#));
        text.push('\n');
        orders.push(Order {
            id,
            customer,
            amount,
        });
    }
    std::fs::write(d.join("orders.ndjson"), text).unwrap();
    let mut customers: Vec<Customer> = (0..40)
        .map(|i| Customer {
            id: Some(i),
            tier: TIERS[(i % 3) as usize],
        })
        .collect();
    customers.push(Customer {
        id: Some(5),
        tier: "gold",
    });
    customers.push(Customer {
        id: Some(6),
        tier: TIERS[0],
    });
    customers.push(Customer {
        id: None,
        tier: "silver",
    });
    customers.push(Customer {
        id: None,
        tier: "gold",
    });
    let text: String = customers
        .iter()
        .map(|c| match c.id {
            Some(i) => format!("{{\"id\":{i},\"tier\":\"{}\"}}\n", c.tier),
            None => format!("{{\"id\":null,\"tier\":\"{}\"}}\n", c.tier),
        })
        .collect();
    std::fs::write(d.join("customers.ndjson"), text).unwrap();
    (orders, customers)
}

fn sql(d: &Path) -> String {
    let p = |n: &str| d.join(n).to_string_lossy().into_owned();
    let dbz = |n: &str| debezium_file(&d.join(n));
    format!(
        "CREATE TABLE orders (order_id BIGINT, customer BIGINT, amount BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE customers (id BIGINT, tier STRING)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE lj (order_id BIGINT, amount BIGINT, tier STRING) {};
CREATE TABLE fj (order_id BIGINT, id BIGINT, tier STRING) {};
CREATE TABLE per_tier (tier STRING, n BIGINT, total BIGINT) {};
CREATE TABLE rich (id BIGINT, tier STRING, spend BIGINT) {};
CREATE TABLE ij (order_id BIGINT, tier STRING)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE VIEW spend AS SELECT customer, SUM(amount) AS spend FROM orders GROUP BY customer;
INSERT INTO lj SELECT o.order_id, o.amount, c.tier FROM orders o LEFT JOIN customers c ON o.customer = c.id;
INSERT INTO fj SELECT o.order_id, c.id, c.tier FROM orders AS o FULL OUTER JOIN customers AS c ON o.customer = c.id;
INSERT INTO per_tier SELECT c.tier, COUNT(*), SUM(o.amount) FROM orders o, customers c WHERE o.customer = c.id GROUP BY c.tier;
INSERT INTO rich SELECT c.id, c.tier, s.spend FROM customers c JOIN spend s ON c.id = s.customer WHERE s.spend > 3000;
INSERT INTO ij SELECT o.order_id, c.tier FROM orders o JOIN customers c ON o.customer = c.id WHERE o.amount > 50;
",
        p("orders.ndjson"),
        p("customers.ndjson"),
        dbz("lj"),
        dbz("fj"),
        dbz("per_tier"),
        dbz("rich"),
        p("ij")
    )
}

type Table = BTreeMap<String, usize>;

fn add(t: &mut Table, row: Value) {
    *t.entry(row.to_string()).or_insert(0) += 1;
}

/// The tables `lj`, `fj`, `per_tier`, `rich` and `ij` as the SQL defines them.
fn model(orders: &[Order], customers: &[Customer]) -> [Table; 5] {
    let matches = |o: &Order| -> Vec<&Customer> {
        customers
            .iter()
            .filter(|c| o.customer.is_some() && c.id == o.customer)
            .collect()
    };
    let (mut lj, mut fj, mut rich, mut ij) =
        (Table::new(), Table::new(), Table::new(), Table::new());
    let mut tiers: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
    for o in orders {
        let m = matches(o);
        if m.is_empty() {
            add(
                &mut lj,
                json!({"order_id": o.id, "amount": o.amount, "tier": null}),
            );
            add(&mut fj, json!({"order_id": o.id, "id": null, "tier": null}));
        }
        for c in m {
            add(
                &mut lj,
                json!({"order_id": o.id, "amount": o.amount, "tier": c.tier}),
            );
            add(
                &mut fj,
                json!({"order_id": o.id, "id": c.id, "tier": c.tier}),
            );
            let t = tiers.entry(c.tier).or_default();
            *t = (t.0 + 1, t.1 + o.amount);
            if o.amount > 50 {
                add(&mut ij, json!({"order_id": o.id, "tier": c.tier}));
            }
        }
    }
    for c in customers {
        let spend: Option<i64> = c.id.and_then(|id| {
            let mine: Vec<i64> = orders
                .iter()
                .filter(|o| o.customer == Some(id))
                .map(|o| o.amount)
                .collect();
            (!mine.is_empty()).then(|| mine.iter().sum())
        });
        if spend.is_none() {
            add(
                &mut fj,
                json!({"order_id": null, "id": c.id, "tier": c.tier}),
            );
        }
        if let Some(s) = spend.filter(|s| *s > 3000) {
            add(&mut rich, json!({"id": c.id, "tier": c.tier, "spend": s}));
        }
    }
    let per_tier = tiers
        .into_iter()
        .map(|(tier, (n, total))| (json!({"tier": tier, "n": n, "total": total}).to_string(), 1))
        .collect();
    [lj, fj, per_tier, rich, ij]
}

fn read_json(path: &Path) -> Table {
    let mut t = Table::new();
    for line in read_lines(path) {
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        add(&mut t, v);
    }
    t
}

#[test]
fn outer_joins_grouped_joins_and_joins_of_updating_results_materialise_to_the_model() {
    for shards in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (orders, customers) = data(d);
        let want = model(&orders, &customers);
        // The threshold must both keep and drop customers for `rich` to mean anything.
        assert!(!want[3].is_empty() && want[3].len() < 25, "{:?}", want[3]);
        let cfg = sql_job(d, &sql(d), "");
        let text = std::fs::read_to_string(&cfg).unwrap();
        std::fs::write(
            &cfg,
            text.replace("shards = 2", &format!("shards = {shards}")),
        )
        .unwrap();
        run_job(d, &cfg);
        let ctx = format!("{shards} shard(s)");
        for (i, name) in ["lj", "fj", "per_tier", "rich"].iter().enumerate() {
            let got = materialise_debezium(&d.join(name).join("part-0.json"));
            assert_eq!(got, want[i], "{ctx}: {name}");
        }
        assert_eq!(read_json(&d.join("ij/part-0.json")), want[4], "{ctx}: ij");
    }
}

/// A joined row too large for the ring it must cross to the rank that reads it (two 5 KB rows,
/// `ring_capacity = 64` slots of 128 bytes) is a dead letter naming ring_capacity, not a job
/// that waits forever; the NULL-padded rows that fit still arrive and are ranked.
#[test]
fn a_joined_row_larger_than_a_ring_is_a_dead_letter() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = "x".repeat(5000);
    let mut orders = String::new();
    for i in 0..20 {
        orders.push_str(&format!(
            "{{\"order_id\":{i},\"customer\":{},\"note\":\"{big}\"}}\n",
            i % 4
        ));
    }
    std::fs::write(d.join("orders.ndjson"), orders).unwrap();
    // Customers 0 and 1 exist: orders of 2 and 3 stay NULL-padded.
    let customers = format!("{{\"id\":0,\"bio\":\"{big}\"}}\n{{\"id\":1,\"bio\":\"{big}\"}}\n");
    std::fs::write(d.join("customers.ndjson"), customers).unwrap();
    let p = |n: &str| d.join(n).to_string_lossy().into_owned();
    let sql = format!(
        "CREATE TABLE orders (order_id BIGINT, customer BIGINT, note STRING)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE customers (id BIGINT, bio STRING)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE TABLE o (order_id BIGINT, id BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'debezium-json');
INSERT INTO o SELECT order_id, id FROM (
  SELECT o.order_id, c.id, o.note, c.bio,
    ROW_NUMBER() OVER (PARTITION BY o.customer ORDER BY o.order_id DESC) AS rn
  FROM orders o LEFT JOIN customers c ON o.customer = c.id
) WHERE rn = 1;
",
        p("orders.ndjson"),
        p("customers.ndjson"),
        p("o")
    );
    let cfg = sql_job(d, &sql, "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("shards = 2", "shards = 2\nring_capacity = 64"),
    )
    .unwrap();
    run_job(d, &cfg);
    let dead = read_lines(&d.join("dead.ndjson"));
    // The 10 orders of customers 0 and 1 each pair with one 5 KB customer row.
    assert_eq!(dead.len(), 10, "{}", dead.len());
    assert!(
        dead.iter().all(|l| l.contains("raise ring_capacity")),
        "{}",
        dead[0]
    );
    // Customers 2 and 3 have no row: their latest orders (18 and 19) stay, NULL-padded; the
    // padded rows of customers 0 and 1 were taken back when their customer arrived.
    let table = common::changelog::materialise_debezium(&d.join("o/part-0.json"));
    let want: std::collections::BTreeMap<String, usize> = [
        (
            serde_json::json!({"order_id": 18, "id": null}).to_string(),
            1,
        ),
        (
            serde_json::json!({"order_id": 19, "id": null}).to_string(),
            1,
        ),
    ]
    .into();
    assert_eq!(table, want);
}
