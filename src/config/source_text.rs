//! The text a config came from, and where each key sits in it, so that every error can name a
//! file, line, column and key.
//!
//! Typed parsing goes through serde's buffered content for internally tagged enums, which drops
//! toml's spans; so the same text is parsed a second time into a plain tree of spanned keys and
//! values (spans requested the way `toml::Spanned` requests them) and flattened into [`KeyPath`] entries.
//! If that second parse fails (only on text the typed parse rejects too, or on TOML datetimes,
//! which no sluice key uses), positions degrade to "file only"; nothing else depends on them.

use std::fmt;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// One step of a key path: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A dotted path to a key, as a user would write it: `transforms.clicks_per_minute.inputs[0]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyPath(pub Vec<Seg>);

impl KeyPath {
    pub fn new<'a>(keys: impl IntoIterator<Item = &'a str>) -> KeyPath {
        KeyPath(keys.into_iter().map(|k| Seg::Key(k.to_string())).collect())
    }
    pub fn key(mut self, key: &str) -> KeyPath {
        self.0.push(Seg::Key(key.to_string()));
        self
    }
    pub fn index(mut self, i: usize) -> KeyPath {
        self.0.push(Seg::Index(i));
        self
    }
    pub fn parent(&self) -> KeyPath {
        KeyPath(self.0[..self.0.len().saturating_sub(1)].to_vec())
    }
    pub fn last_key(&self) -> Option<&str> {
        match self.0.last() {
            Some(Seg::Key(k)) => Some(k),
            _ => None,
        }
    }
    pub fn first_key(&self) -> Option<&str> {
        match self.0.first() {
            Some(Seg::Key(k)) => Some(k),
            _ => None,
        }
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Index(n) => write!(f, "[{n}]")?,
                Seg::Key(k) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    let bare = !k.is_empty()
                        && k.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if bare {
                        f.write_str(k)?;
                    } else {
                        write!(f, "{k:?}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// A place in a config file. `line` and `column` are 1-based; `None` when the place is unknown
/// (a config built in code, or text whose key positions could not be recovered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line_col: Option<(usize, usize)>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line_col {
            Some((line, col)) => write!(f, "{}:{line}:{col}", self.file),
            None => f.write_str(&self.file),
        }
    }
}

/// What a key holds, as far as error reporting needs to know.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryValue {
    Table,
    Array,
    /// The scalar as written in a message: a string's contents, a number's digits.
    Scalar(String),
}

/// One key (or array element) of the document and where it is.
#[derive(Debug, Clone)]
pub struct Entry {
    pub path: KeyPath,
    /// Where the key itself is written; `None` for array elements.
    pub key_span: Option<Range<usize>>,
    /// Where the value is written; `None` for the implicit tables of a dotted header.
    pub value_span: Option<Range<usize>>,
    pub value: EntryValue,
}

impl Entry {
    /// Where to point a user at: the key if it has one, else the value.
    pub fn offset(&self) -> Option<usize> {
        self.key_span
            .as_ref()
            .or(self.value_span.as_ref())
            .map(|s| s.start)
    }
}

/// A config's text, its name for messages, and the position of every key in it.
#[derive(Debug, Clone, Default)]
pub struct SourceText {
    origin: String,
    line_starts: Vec<usize>,
    text: String,
    entries: Vec<Entry>,
}

impl SourceText {
    /// `origin` is how messages name the file (the path as the user gave it).
    pub fn new(origin: &str, text: &str) -> SourceText {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let mut entries = Vec::new();
        if let Ok(root) = toml::from_str::<Node>(text) {
            flatten(&KeyPath::default(), root, &mut entries);
        }
        SourceText {
            origin: origin.to_string(),
            line_starts,
            text: text.to_string(),
            entries,
        }
    }

    /// For a config that was not read from text: locations name only `origin`.
    pub fn without_text(origin: &str) -> SourceText {
        SourceText {
            origin: origin.to_string(),
            ..SourceText::default()
        }
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn location_of_offset(&self, offset: usize) -> Location {
        if self.line_starts.is_empty() {
            return self.location_unknown();
        }
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let line_start = self.line_starts[line.saturating_sub(1)];
        let col = self
            .text
            .get(line_start..offset.min(self.text.len()))
            .map_or(1, |s| s.chars().count() + 1);
        Location {
            file: self.origin.clone(),
            line_col: Some((line.max(1), col)),
        }
    }

    /// The whole text the config was parsed from (empty for one not read from text).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text written at `span` (empty where it is not in the text).
    pub fn text_at(&self, span: Range<usize>) -> &str {
        self.text.get(span).unwrap_or("")
    }

    pub fn location_unknown(&self) -> Location {
        Location {
            file: self.origin.clone(),
            line_col: None,
        }
    }

    pub fn entry(&self, path: &KeyPath) -> Option<&Entry> {
        self.entries.iter().find(|e| &e.path == path)
    }

    /// The position of `path`, or of its nearest written ancestor (a defaulted key is not in the
    /// text, but the table it would belong to is).
    pub fn locate(&self, path: &KeyPath) -> Location {
        let mut path = path.clone();
        loop {
            if let Some(offset) = self.entry(&path).and_then(Entry::offset) {
                return self.location_of_offset(offset);
            }
            if path.0.is_empty() {
                return self.location_unknown();
            }
            path = path.parent();
        }
    }

    /// The deepest entry whose value is exactly `span`, else the deepest that contains its start.
    pub fn entry_for_span(&self, span: &Range<usize>) -> Option<&Entry> {
        let exact = self
            .entries
            .iter()
            .filter(|e| e.value_span.as_ref() == Some(span));
        exact.max_by_key(|e| e.path.0.len()).or_else(|| {
            self.entries
                .iter()
                .filter(|e| {
                    e.value_span.as_ref().is_some_and(|v| {
                        v.start <= span.start && span.start < v.end.max(v.start + 1)
                    })
                })
                .max_by_key(|e| e.path.0.len())
        })
    }

    /// The shallowest entry at or below `under` matching `pred` (shallowest: a key the typed parse
    /// rejected at one level may legitimately appear deeper down).
    pub fn find_under(&self, under: &KeyPath, pred: impl Fn(&Entry) -> bool) -> Option<&Entry> {
        self.entries
            .iter()
            .filter(|e| e.path.0.starts_with(&under.0) && pred(e))
            .min_by_key(|e| e.path.0.len())
    }
}

/// A TOML value with the spans of its keys and elements kept.
enum Node {
    Table(Vec<(SpannedKey, SpannedNode)>),
    Array(Vec<SpannedNode>),
    Scalar(String),
}

fn flatten(path: &KeyPath, node: Node, out: &mut Vec<Entry>) {
    match node {
        Node::Table(items) => {
            for (key, value) in items {
                push(path.clone().key(&key.name), key.span, value, out);
            }
        }
        Node::Array(items) => {
            for (i, value) in items.into_iter().enumerate() {
                push(path.clone().index(i), None, value, out);
            }
        }
        Node::Scalar(_) => {}
    }
}

fn push(path: KeyPath, key_span: Option<Range<usize>>, value: SpannedNode, out: &mut Vec<Entry>) {
    let summary = match &value.node {
        Node::Table(_) => EntryValue::Table,
        Node::Array(_) => EntryValue::Array,
        Node::Scalar(s) => EntryValue::Scalar(s.clone()),
    };
    out.push(Entry {
        path: path.clone(),
        key_span,
        value_span: value.span,
        value: summary,
    });
    flatten(&path, value.node, out);
}

// The names toml (via serde_spanned 0.6) recognises as a request for a spanned value. toml hands
// out spans only where it has them: not for the implicit tables and keys of a dotted header
// (`[transforms.x]` has none for `transforms`), where `toml::Spanned` fails outright. So the two
// types below ask for a span the same way but accept a plain value when none comes.
const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
const SPANNED_START: &str = "$__serde_spanned_private_start";
const SPANNED_END: &str = "$__serde_spanned_private_end";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];

/// A table key and its span where toml knows it.
struct SpannedKey {
    name: String,
    span: Option<Range<usize>>,
}

impl<'de> Deserialize<'de> for SpannedKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = SpannedKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table key")
            }
            fn visit_str<E>(self, v: &str) -> Result<SpannedKey, E> {
                Ok(SpannedKey {
                    name: v.to_string(),
                    span: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SpannedKey, A::Error> {
                let (mut start, mut end, mut name) = (None, None, None);
                while let Some(field) = map.next_key::<String>()? {
                    match field.as_str() {
                        SPANNED_START => start = Some(map.next_value::<usize>()?),
                        SPANNED_END => end = Some(map.next_value::<usize>()?),
                        SPANNED_VALUE => name = Some(map.next_value::<String>()?),
                        _ => map.next_value::<IgnoredAny>().map(|_| ())?,
                    }
                }
                let name = name.ok_or_else(|| serde::de::Error::missing_field(SPANNED_VALUE))?;
                let span = start.zip(end).map(|(s, e)| s..e);
                Ok(SpannedKey { name, span })
            }
        }
        deserializer.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, KeyVisitor)
    }
}

/// A value and its span where toml knows it.
struct SpannedNode {
    span: Option<Range<usize>>,
    node: Node,
}

impl<'de> Deserialize<'de> for SpannedNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SpannedVisitor;
        impl<'de> Visitor<'de> for SpannedVisitor {
            type Value = SpannedNode;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any TOML value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<SpannedNode, E> {
                Ok(unspanned(Node::Scalar(v.to_string())))
            }
            fn visit_i64<E>(self, v: i64) -> Result<SpannedNode, E> {
                Ok(unspanned(Node::Scalar(v.to_string())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<SpannedNode, E> {
                Ok(unspanned(Node::Scalar(v.to_string())))
            }
            fn visit_f64<E>(self, v: f64) -> Result<SpannedNode, E> {
                Ok(unspanned(Node::Scalar(v.to_string())))
            }
            fn visit_str<E>(self, v: &str) -> Result<SpannedNode, E> {
                Ok(unspanned(Node::Scalar(v.to_string())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<SpannedNode, A::Error> {
                Ok(unspanned(NodeVisitor.visit_seq(seq)?))
            }
            /// Either the spanned form (first key is the start field) or a plain table.
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SpannedNode, A::Error> {
                let Some(first) = map.next_key::<SpannedKey>()? else {
                    return Ok(unspanned(Node::Table(Vec::new())));
                };
                if first.name != SPANNED_START {
                    let mut items = vec![(first, map.next_value::<SpannedNode>()?)];
                    while let Some(key) = map.next_key::<SpannedKey>()? {
                        items.push((key, map.next_value()?));
                    }
                    return Ok(unspanned(Node::Table(items)));
                }
                let start = map.next_value::<usize>()?;
                let (mut end, mut node) = (None, None);
                while let Some(field) = map.next_key::<String>()? {
                    match field.as_str() {
                        SPANNED_END => end = Some(map.next_value::<usize>()?),
                        SPANNED_VALUE => node = Some(map.next_value::<Node>()?),
                        _ => map.next_value::<IgnoredAny>().map(|_| ())?,
                    }
                }
                let node = node.ok_or_else(|| serde::de::Error::missing_field(SPANNED_VALUE))?;
                Ok(SpannedNode {
                    span: end.map(|end| start..end),
                    node,
                })
            }
        }
        deserializer.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, SpannedVisitor)
    }
}

fn unspanned(node: Node) -> SpannedNode {
    SpannedNode { span: None, node }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any TOML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Scalar(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Scalar(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Scalar(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Scalar(v.to_string()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Scalar(v.to_string()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(key) = map.next_key()? {
            items.push((key, map.next_value()?));
        }
        Ok(Node::Table(items))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "[runtime]\nshards = 2\n\n[transforms.w]\ntype = \"window\"\ninputs = [\"a\", \"b\"]\nwindow = { type = \"tumbling\", size = \"1m\" }\n";

    #[test]
    fn keys_elements_and_inline_tables_have_positions() {
        let src = SourceText::new("f.toml", TEXT);
        let at = |p: KeyPath| src.locate(&p).to_string();
        assert_eq!(at(KeyPath::new(["runtime", "shards"])), "f.toml:2:1");
        assert_eq!(at(KeyPath::new(["transforms", "w"])), "f.toml:4:13");
        assert_eq!(
            at(KeyPath::new(["transforms", "w", "inputs"]).index(1)),
            "f.toml:6:16"
        );
        assert_eq!(
            at(KeyPath::new(["transforms", "w", "window", "size"])),
            "f.toml:7:31"
        );
        // A key that is not written falls back to its nearest written ancestor.
        assert_eq!(
            at(KeyPath::new(["transforms", "w", "allowed_lateness"])),
            "f.toml:4:13"
        );
        assert_eq!(at(KeyPath::new(["sinks", "s"])), "f.toml");
        let size = src
            .entry(&KeyPath::new(["transforms", "w", "window", "size"]))
            .unwrap();
        assert_eq!(size.value, EntryValue::Scalar("1m".into()));
    }

    #[test]
    fn paths_display_as_written() {
        let p = KeyPath::new(["sinks", "late clicks", "inputs"]).index(0);
        assert_eq!(p.to_string(), "sinks.\"late clicks\".inputs[0]");
        assert_eq!(p.parent().parent().last_key(), Some("late clicks"));
    }

    #[test]
    fn unparsable_text_still_gives_line_numbers_for_offsets() {
        let src = SourceText::new("f.toml", "a = 1\nb = \n");
        assert!(src.entries().is_empty());
        assert_eq!(src.location_of_offset(10).to_string(), "f.toml:2:5");
        assert_eq!(
            SourceText::without_text("x")
                .location_of_offset(3)
                .to_string(),
            "x"
        );
    }
}
