//! A job's tables as TOML text, for reading: what `sluice explain` prints for a SQL job (the
//! sources, transforms and sinks its statements compile to). Each table is one `[section.name]`
//! with a `key = value` line per key, nested tables written inline, keys in their struct's order.
//! Nothing reads this text back: the compiled tables are already typed.

use serde::Serialize;

/// `[section.name]` and its keys, then a blank line.
pub fn table(section: &str, name: &str, value: &impl Serialize) -> String {
    let mut out = format!("[{section}.{}]\n", key(name));
    match toml::Value::try_from(value) {
        Ok(toml::Value::Table(t)) => {
            for (k, v) in t {
                out += &format!("{} = {v}\n", key(&k));
            }
        }
        Ok(other) => out += &format!("# not a table: {other}\n"),
        Err(e) => out += &format!("# cannot be written as TOML: {e}\n"),
    }
    out.push('\n');
    out
}

/// A key bare where TOML allows it, else quoted.
fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        k.to_string()
    } else {
        toml::Value::String(k.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{parse, SourceConfig, TransformConfig};

    /// What is printed reads back as the same tables.
    #[test]
    fn printed_tables_parse_back_to_the_same_config() {
        let text = r#"[sources.clicks]
type = "file"
path = "data/clicks.ndjson"
event_time = { field = "ts", unit = "ms" }

[transforms."per minute"]
type = "window"
inputs = ["clicks"]
group_by = ["ad_id"]
window = { type = "sliding", size = "10s", slide = "5s" }
aggregates = { n = "count()", "odd key" = "sum(bid)" }

[sinks.out]
type = "stdout"
inputs = ["per minute"]
"#;
        let (cfg, _) = parse(text, "t.toml").unwrap();
        let mut again = String::new();
        for (n, s) in &cfg.sources {
            again += &table("sources", n, s);
        }
        for (n, t) in &cfg.transforms {
            again += &table("transforms", n, t);
        }
        for (n, s) in &cfg.sinks {
            again += &table("sinks", n, s);
        }
        assert!(
            again.contains(r#"window = { type = "sliding", size = "10000ms", slide = "5000ms" }"#),
            "{again}"
        );
        assert!(again.contains(r#"[transforms."per minute"]"#), "{again}");
        let (back, _) = parse(&again, "again.toml").unwrap_or_else(|e| panic!("{e}\n{again}"));
        assert_eq!(back.sources, cfg.sources);
        assert_eq!(back.transforms, cfg.transforms);
        assert_eq!(back.sinks, cfg.sinks);
        assert!(matches!(back.sources["clicks"], SourceConfig::File(_)));
        assert!(matches!(
            back.transforms["per minute"],
            TransformConfig::Window(_)
        ));
    }
}
