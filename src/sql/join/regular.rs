//! A regular join (no time bounds): without `table.exec.state.ttl` the `join` that keeps every
//! row until it is retracted, of any kind and over updating inputs, as Flink runs it; with the
//! TTL, an inner join of two append-only tables whose rows expire that long after their event
//! time. Its result has no time attribute, as in Flink, and updates where a side is outer or an
//! input updates.

use sqlparser::ast::Select;

use super::super::expr::unsupported;
use super::super::parts::ms;
use super::super::query::Item;
use super::super::{Compiler, SqlError, Stream};
use super::{prefixed, Kind, RegularParts, Side};
use crate::config::{RegularJoinConfig, TransformConfig};

impl Compiler {
    /// A regular join (no time bounds): Flink keeps its rows for `table.exec.state.ttl`, here in
    /// event time; its result has no time attribute, as in Flink.
    pub(super) fn regular(
        &mut self,
        sel: &Select,
        left: Side,
        right: Side,
        (kind, keys, rest, post, at): RegularParts<'_, '_>,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let updating = left.stream.updating || right.stream.updating;
        let ttl = match self.state_ttl {
            Some(ttl) if kind == Kind::Inner && !updating => {
                if let Some(side) = [&left, &right].into_iter().find(|s| s.stream.time.is_none()) {
                    return Err(SqlError::span(at, format!("with table.exec.state.ttl set, sluice expires a regular join's rows in event time, but `{}` has no time attribute (no WATERMARK): remove the SET to keep every row until it is retracted, as Flink does without a TTL", side.alias)));
                }
                Some(ttl)
            }
            Some(_) => return Err(SqlError::span(at, "with table.exec.state.ttl set, sluice expires a regular join's rows in event time, which it does for an inner join of two append-only tables only; this join is outer or reads an updating result: remove the SET to keep every row until it is retracted, as Flink does without a TTL")),
            None => None,
        };
        let ([left, right], gates, rest) =
            self.split_conditions(kind, [left, right], rest, base)?;
        if let Some(both) = rest.first().filter(|_| kind != Kind::Inner) {
            return Err(unsupported(
                *both,
                "in an outer join, a condition in ON that reads both sides (other than the key equality) is",
            ));
        }
        let (left, right, on) = self.keyed(left, right, keys, gates, base)?;
        let name = format!("{base}_join");
        let table = TransformConfig::Join(RegularJoinConfig {
            left: left.stream.name.clone(),
            right: right.stream.name.clone(),
            on,
            ttl: ttl.map(ms),
            kind: kind.interval(),
            late_events: None,
            hot_keys: None,
        });
        self.push_transform(&name, table);
        let sides = [
            prefixed(left, "left", false),
            prefixed(right, "right", false),
        ];
        self.finish_join(
            sel,
            sides.into(),
            (
                rest.into_iter().chain(post).collect(),
                updating || kind != Kind::Inner,
            ),
            &name,
            base,
        )
    }
}
