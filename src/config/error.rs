//! Config-layer errors: a file that cannot be read, or text that is not a sluice config.
//!
//! serde stops at the first problem and, inside internally tagged enums, reports it against the
//! whole component table; this module turns that into a message naming the exact key, its line and
//! column, what was expected, and a "did you mean" for misspelt keys and names.

use super::source_text::{Entry, EntryValue, KeyPath, Location, SourceText};
use super::suggest;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read the config file: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// `key` is the dotted path of the offending key (empty when the problem is not at a key,
    /// such as a TOML syntax error).
    #[error("{at}: {message}")]
    Invalid {
        at: Location,
        key: String,
        message: String,
    },
    /// Several problems, one per line, in file order.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Many(Vec<ConfigError>),
}

impl ConfigError {
    /// Builds the error for a failed typed parse of `src`'s text.
    pub(super) fn from_toml(err: &toml::de::Error, src: &SourceText) -> ConfigError {
        ConfigError::from_toml_in(err, src, None)
    }

    /// As [`ConfigError::from_toml`], for an error of deserializing one part of the file alone
    /// (`part`: the table it was, such as `sources.clicks`), which carries no position.
    pub(super) fn from_toml_in(
        err: &toml::de::Error,
        src: &SourceText,
        part: Option<&KeyPath>,
    ) -> ConfigError {
        // toml's syntax messages span several lines; keep each problem on one.
        let msg = err.message().trim().replace('\n', "; ");
        let span = err.span();
        let owner = span.as_ref().and_then(|s| src.entry_for_span(s));
        let owner_path = match (owner, part) {
            (Some(e), _) => e.path.clone(),
            (None, Some(p)) => p.clone(),
            (None, None) => KeyPath::default(),
        };
        let fallback_at = || match (&span, part) {
            (Some(s), _) => src.location_of_offset(s.start),
            (None, Some(p)) => src.locate(p),
            (None, None) => src.location_unknown(),
        };
        let invalid = |at: Location, key: &KeyPath, message: String| ConfigError::Invalid {
            at,
            key: key.to_string(),
            message,
        };

        if let Some(rest) = msg.strip_prefix("unknown field ") {
            let (name, expected) = split_quoted(rest);
            let found = src.find_under(&owner_path, |e| e.path.last_key() == Some(name.as_str()));
            let (at, key) = match found {
                Some(e) => (src.locate(&e.path), e.path.clone()),
                None => (fallback_at(), owner_path.clone().key(&name)),
            };
            let hint = match suggest::did_you_mean(&name, expected.iter().map(String::as_str)) {
                Some(s) => format!("; did you mean `{s}`?"),
                None => expected_list(&expected),
            };
            return invalid(
                at,
                &key,
                format!("unknown key `{name}` {}{hint}", in_table(&key.parent())),
            );
        }
        if let Some(rest) = msg.strip_prefix("missing field ") {
            let (name, _) = split_quoted(rest);
            // If the owner has the key, the table missing it is one nested inside the owner
            // (`window = { size = "1m" }` without a `type`).
            let has = |table: &KeyPath| src.entry(&table.clone().key(&name)).is_some();
            let mut table = owner_path.clone();
            let mut at = fallback_at();
            if has(&owner_path) {
                let nested = src.find_under(&owner_path, |e| {
                    e.value == EntryValue::Table && e.path != owner_path && !has(&e.path)
                });
                if let Some(e) = nested {
                    table = e.path.clone();
                    at = src.locate(&e.path);
                }
            }
            let hint = if name == "type" && table.0.len() == 2 {
                type_hint(&table)
            } else {
                String::new()
            };
            let key = table.clone().key(&name);
            return invalid(
                at,
                &key,
                format!("missing key `{name}` {}{hint}", in_table(&table)),
            );
        }
        if let Some(rest) = msg.strip_prefix("unknown variant ") {
            let (name, expected) = split_quoted(rest);
            let found =
                src.find_under(&owner_path, |e| e.value == EntryValue::Scalar(name.clone()));
            let (at, key) = located(src, found, fallback_at(), &owner_path);
            let hint = suggest::hint(&name, expected.iter().map(String::as_str));
            return invalid(
                at,
                &key,
                format!(
                    "`{key}`: unknown value `{name}`{}{hint}",
                    expected_list(&expected)
                ),
            );
        }
        // Any other problem with a value: if toml pointed at the value itself, that is the key;
        // otherwise find the value the message quotes (`10 parsecs`, integer `10`) below the owner.
        let found = match owner {
            Some(e) if matches!(e.value, EntryValue::Scalar(_) | EntryValue::Array) => Some(e),
            _ => first_quoted(&msg)
                .or_else(|| quoted_string(&msg))
                .and_then(|quoted| {
                    src.find_under(&owner_path, |e| {
                        e.value == EntryValue::Scalar(quoted.to_string())
                    })
                }),
        };
        let (at, key) = located(src, found, fallback_at(), &owner_path);
        if key.0.is_empty() {
            return invalid(at, &key, msg);
        }
        invalid(at, &key, format!("`{key}`: {msg}"))
    }

    /// The dotted key the error is about; empty for syntax errors and unreadable files.
    pub fn key(&self) -> &str {
        match self {
            ConfigError::Invalid { key, .. } => key,
            ConfigError::Many(all) => all.first().map_or("", ConfigError::key),
            ConfigError::Read { .. } => "",
        }
    }

    /// Each problem on its own (one for all but [`ConfigError::Many`]).
    pub fn problems(&self) -> Vec<&ConfigError> {
        match self {
            ConfigError::Many(all) => all.iter().collect(),
            one => vec![one],
        }
    }
}

/// Where and what the key is: the entry found, else the owner at toml's own position.
fn located(
    src: &SourceText,
    found: Option<&Entry>,
    fallback: Location,
    owner: &KeyPath,
) -> (Location, KeyPath) {
    match found {
        Some(e) => (src.locate(&e.path), e.path.clone()),
        None => (fallback, owner.clone()),
    }
}

fn in_table(table: &KeyPath) -> String {
    if table.0.is_empty() {
        "at the top level".to_string()
    } else {
        format!("in [{table}]")
    }
}

/// Splits "`name`, expected one of `a`, `b`" into ("name", ["a", "b"]).
fn split_quoted(text: &str) -> (String, Vec<String>) {
    let mut quoted = text.split('`').skip(1).step_by(2).map(str::to_string);
    let name = quoted.next().unwrap_or_default();
    (name, quoted.collect())
}

/// The string serde quotes in `invalid type: string "two", expected usize`.
fn quoted_string(text: &str) -> Option<&str> {
    let rest = text.split_once("string \"")?.1;
    Some(rest.rsplit_once("\", expected")?.0)
}

fn first_quoted(text: &str) -> Option<&str> {
    text.split('`').nth(1)
}

fn expected_list(expected: &[String]) -> String {
    if expected.is_empty() {
        return String::new();
    }
    let list: Vec<String> = expected.iter().map(|e| format!("`{e}`")).collect();
    format!("; expected one of {}", list.join(", "))
}

/// What `type` may be for a component under `[sources]`, `[transforms]` or `[sinks]`: the list
/// the parser itself accepts, so the hint cannot fall behind a new kind.
fn type_hint(owner: &KeyPath) -> String {
    let kinds = match owner.first_key() {
        Some("sources") => super::kinds_of::<super::SourceConfig>(),
        Some("transforms") => super::kinds_of::<super::TransformConfig>(),
        Some("sinks") => super::kinds_of::<super::SinkConfig>(),
        _ => return String::new(),
    };
    let quoted: Vec<String> = kinds.iter().map(|k| format!("\"{k}\"")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            format!(" (expected type = {} or {last})", rest.join(", "))
        }
        Some((only, _)) => format!(" (expected type = {only})"),
        None => String::new(),
    }
}

/// The names of an internally tagged enum's variants, as serde lists them when refusing one.
pub(super) fn variants_from_refusal(message: &str) -> Vec<String> {
    match message.split_once("expected one of") {
        Some((_, list)) => split_quoted(&format!("``{list}")).1,
        None => match message.split_once("expected ") {
            Some((_, one)) => split_quoted(&format!("``{one}")).1,
            None => Vec::new(),
        },
    }
}
