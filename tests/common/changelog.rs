//! Changelogs as the tests read them back: a sink's `+I`/`-U`/`+U`/`-D` rows applied in order to a
//! table (a multiset of rows), which must never take back a row it does not hold.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The final table of a debezium-json changelog file, as a multiset of rows (JSON text).
pub fn materialise_debezium(path: &Path) -> BTreeMap<String, usize> {
    materialise_lines(&super::read_lines(path))
}

/// The final table of debezium-json changelog lines.
pub fn materialise_lines(lines: &[String]) -> BTreeMap<String, usize> {
    let mut table = BTreeMap::new();
    for line in lines {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        match v["op"].as_str() {
            Some("c") => {
                assert!(v["before"].is_null(), "{line}");
                *table.entry(v["after"].to_string()).or_insert(0) += 1;
            }
            Some("d") => {
                assert!(v["after"].is_null(), "{line}");
                take_back(&mut table, v["before"].to_string(), line);
            }
            _ => panic!("not a debezium change: {line}"),
        }
    }
    table
}

fn take_back(table: &mut BTreeMap<String, usize>, row: String, line: &str) {
    match table.get_mut(&row) {
        Some(n) if *n > 1 => *n -= 1,
        Some(_) => {
            table.remove(&row);
        }
        None => panic!("takes back a row that is not there: {line}"),
    }
}

/// The final table of Flink `print` rows (`+I[..]` ..) on stdout.
pub fn materialise_print(stdout: &str) -> BTreeMap<String, usize> {
    let mut table = BTreeMap::new();
    for line in stdout.lines().filter(|l| !l.is_empty()) {
        let (kind, row) = line.split_at(2);
        assert!(row.starts_with('[') && row.ends_with(']'), "{line}");
        match kind {
            "+I" | "+U" => *table.entry(row.to_string()).or_insert(0) += 1,
            "-U" | "-D" => take_back(&mut table, row.to_string(), line),
            _ => panic!("not a print row: {line}"),
        }
    }
    table
}
