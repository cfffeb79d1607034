//! A changelog source's rows (`changelog = "debezium-json"` on a file or Kafka source): each line
//! is decoded by `record::debezium` into the one or two rows it changes, and the reader binds
//! them one at a time, each with its kind; an update's new row waits here while its old row is
//! read. Shared by the readers of every source kind that takes the option.

use serde::{Deserialize, Serialize};

use crate::record::debezium::{decode, Change};
use crate::record::event::RowKind;

/// `changelog = "..."` on a source: how its lines encode a changelog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum SourceChangelog {
    /// Debezium's JSON envelope (Flink's `debezium-json` format).
    #[serde(rename = "debezium-json")]
    DebeziumJson,
}

/// What a line decoded to.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    /// It changes nothing (a tombstone).
    Skip,
    /// Its (first) row is in [`ChangelogRows::row`], with this kind.
    Row(RowKind),
    /// Not a change: a dead letter with this reason.
    Dead(String),
}

/// The row being read, and an update's new row while its old one is read.
#[derive(Debug, Default)]
pub struct ChangelogRows {
    pub row: Vec<u8>,
    after: Vec<u8>,
    pending: bool,
}

impl ChangelogRows {
    /// Decodes `line`: its first row into `row`; an update's second row waits for
    /// [`ChangelogRows::next_pending`].
    pub fn decode(&mut self, line: &[u8]) -> Decoded {
        self.pending = false;
        self.row.clear();
        match decode(line) {
            Ok(Change::None) => Decoded::Skip,
            Ok(Change::One(kind, row)) => {
                self.row.extend_from_slice(row);
                Decoded::Row(kind)
            }
            Ok(Change::Update { before, after }) => {
                self.row.extend_from_slice(before);
                self.after.clear();
                self.after.extend_from_slice(after);
                self.pending = true;
                Decoded::Row(RowKind::UpdateBefore)
            }
            Err(why) => Decoded::Dead(why),
        }
    }

    /// An update's new row, moved into `row`, if one waits.
    pub fn next_pending(&mut self) -> Option<RowKind> {
        if !std::mem::take(&mut self.pending) {
            return None;
        }
        std::mem::swap(&mut self.row, &mut self.after);
        Some(RowKind::UpdateAfter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_is_read_as_its_old_row_then_its_new_one() {
        let mut c = ChangelogRows::default();
        let u = br#"{"before":{"id":1,"v":1},"after":{"id":1,"v":2},"op":"u"}"#;
        assert_eq!(c.decode(u), Decoded::Row(RowKind::UpdateBefore));
        assert_eq!(c.row, br#"{"id":1,"v":1}"#);
        assert_eq!(c.next_pending(), Some(RowKind::UpdateAfter));
        assert_eq!(c.row, br#"{"id":1,"v":2}"#);
        assert_eq!(c.next_pending(), None);
        assert_eq!(
            c.decode(br#"{"before":{"id":1},"op":"d"}"#),
            Decoded::Row(RowKind::Delete)
        );
        assert_eq!(c.next_pending(), None);
        assert_eq!(c.decode(b"null"), Decoded::Skip);
        assert!(matches!(c.decode(b"{}"), Decoded::Dead(_)));
        // A dead line after an update drops the update's pending row with it.
        c.decode(u);
        assert!(matches!(c.decode(b"{"), Decoded::Dead(_)));
        assert_eq!(c.next_pending(), None);
    }
}
