//! A regular join (no time bounds): without `table.exec.state.ttl` the `join` that keeps every
//! row until it is retracted, of any kind and over updating inputs, as Flink runs it; with the
//! TTL, a join of two append-only tables whose rows expire that long after their event time (an
//! outer one pads a row once it expires unmatched). Its result has no time attribute, as in Flink, and updates where a side is outer or an
//! input updates. An outer join's ON conditions that read both sides go into the join as its
//! `condition` (they decide which rows are NULL-padded).

use sqlparser::ast::Select;

use super::super::expr::unsupported;
use super::super::parts::ms;
use super::super::query::{and_of, Item};
use super::super::{Compiler, SqlError, Stream};
use super::scope::JoinScope;
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
            Some(ttl) if !updating => {
                if let Some(side) = [&left, &right].into_iter().find(|s| s.stream.time.is_none()) {
                    return Err(SqlError::span(at, format!("with table.exec.state.ttl set, sluice expires a regular join's rows in event time, but `{}` has no time attribute (no WATERMARK): remove the SET to keep every row until it is retracted, as Flink does without a TTL", side.alias)));
                }
                Some(ttl)
            }
            Some(_) => return Err(SqlError::span(at, "with table.exec.state.ttl set, sluice expires a regular join's rows in event time, which it does for joins of two append-only tables only; this join reads an updating result: remove the SET to keep every row until it is retracted, as Flink does without a TTL")),
            None => None,
        };
        let ([left, right], gates, rest) =
            self.split_conditions(kind, [left, right], rest, base)?;
        let (left, right, on) = self.keyed(left, right, keys, gates, base)?;
        let name = format!("{base}_join");
        let sides = [
            prefixed(left, "left", false),
            prefixed(right, "right", false),
        ];
        // An inner join's conditions on both sides filter its pairs; an outer join's decide
        // which rows match (the rest are NULL-padded), so the join itself evaluates them.
        let (condition, rest) = if kind == Kind::Inner || rest.is_empty() {
            (None, rest)
        } else if ttl.is_some() {
            return Err(unsupported(rest[0], "with table.exec.state.ttl set, in an outer join, a condition in ON that reads both sides (other than the key equality) is"));
        } else {
            let text = and_of(&rest, &mut JoinScope { sides: &sides })?;
            (Some(text), Vec::new())
        };
        let table = TransformConfig::Join(RegularJoinConfig {
            left: sides[0].stream.name.clone(),
            right: sides[1].stream.name.clone(),
            on,
            ttl: ttl.map(ms),
            kind: kind.interval(),
            condition,
            late_events: None,
            hot_keys: None,
        });
        self.push_transform(&name, table);
        self.finish_join(
            sel,
            sides.into(),
            (
                rest.into_iter().chain(post).collect(),
                // With a TTL an outer join pads a row only once it expires: appends only.
                updating || (kind != Kind::Inner && ttl.is_none()),
            ),
            &name,
            base,
        )
    }
}
