//! Every problem of a config at once: serde stops at the first one, so when the whole file does
//! not deserialize, each part of it (a top-level section, or one named source, transform or sink)
//! is deserialized alone and every part's first problem is reported, in file order. A TOML syntax
//! error still stops everything (nothing after it can be read reliably).

use super::{Config, ConfigError, KeyPath, SourceText};
use serde::de::DeserializeOwned;

/// Sections whose keys are named components, each a part of its own.
const NAMED: [&str; 3] = ["sources", "transforms", "sinks"];

/// The problems of text whose typed parse failed with `first`.
pub(super) fn all_problems(text: &str, src: &SourceText, first: &toml::de::Error) -> ConfigError {
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        return ConfigError::from_toml(first, src);
    };
    let exact = ConfigError::from_toml(first, src);
    let mut found: Vec<ConfigError> = Vec::new();
    for (section, value) in &table {
        match (NAMED.contains(&section.as_str()), value) {
            (true, toml::Value::Table(components)) => {
                for (name, component) in components {
                    let one = toml::Table::from_iter([(name.clone(), component.clone())]);
                    let part = toml::Table::from_iter([(section.clone(), one.into())]);
                    check(
                        part,
                        KeyPath::new([section.as_str(), name.as_str()]),
                        src,
                        (first, &exact),
                        &mut found,
                    );
                }
            }
            _ => {
                let part = toml::Table::from_iter([(section.clone(), value.clone())]);
                check(
                    part,
                    KeyPath::new([section.as_str()]),
                    src,
                    (first, &exact),
                    &mut found,
                );
            }
        }
    }
    found.sort_by_key(|e| match e {
        ConfigError::Invalid { at, .. } => at.line_col.unwrap_or((usize::MAX, 0)),
        _ => (usize::MAX, 0),
    });
    match found.len() {
        // Each part is fine alone: the problem lies between parts; report it as serde did.
        0 => exact,
        1 => found.remove(0),
        _ => ConfigError::Many(found),
    }
}

/// Records the first problem of `part` (at `at`). The whole file's own first error, which carries
/// its exact position, stands for the part it lies in.
fn check(
    part: toml::Table,
    at: KeyPath,
    src: &SourceText,
    first: (&toml::de::Error, &ConfigError),
    found: &mut Vec<ConfigError>,
) {
    let Err(e) = toml::Value::Table(part).try_into::<Config>() else {
        return;
    };
    let exact = first.1.key();
    let within = exact == at.to_string() || exact.starts_with(&format!("{at}."));
    if within {
        found.push(ConfigError::from_toml(first.0, src));
    } else {
        found.push(ConfigError::from_toml_in(&e, src, Some(&at)));
    }
}

/// The `type` names an internally tagged enum accepts, from serde's own refusal of a name that
/// is none of them.
pub(super) fn kinds_of<T: DeserializeOwned>() -> Vec<String> {
    let probe = toml::Table::from_iter([("type".to_string(), toml::Value::from("\u{1}"))]);
    match toml::Value::Table(probe).try_into::<T>() {
        Ok(_) => Vec::new(),
        Err(e) => super::error::variants_from_refusal(e.message()),
    }
}
