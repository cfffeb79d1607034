//! Names in a query over a join (`alias.col`, or `col` where one side has it), and the
//! conditions of an inner join that read one side only, which filter that side before the join.

use sqlparser::ast::{Expr, Function, Ident, Spanned};

use super::super::expr::{translate, Scope};
use super::super::query::{and_of, resolve};
use super::super::{Compiler, SqlError, SqlType};
use super::Side;

/// Names in a query over a join: `alias.col` on that side, or `col` where one side has it.
pub(super) struct JoinScope<'s> {
    pub(super) sides: &'s [Side],
}

impl Scope for JoinScope<'_> {
    fn column(&mut self, parts: &[Ident], e: &Expr) -> Result<(String, SqlType), SqlError> {
        pick(self.sides, parts, e).map(|(_, c)| c)
    }
    fn aggregate(
        &mut self,
        _f: &Function,
        _e: &Expr,
    ) -> Result<Option<(String, SqlType)>, SqlError> {
        Ok(None)
    }
    fn qualified(&self, alias: &str) -> Option<Vec<String>> {
        let side = self.sides.iter().find(|s| s.alias == alias)?;
        Some(side.stream.columns.iter().map(|c| c.name.clone()).collect())
    }
}

/// The side a column reference names (by alias, or the one side that has the column) and its
/// expression on that side.
fn pick(sides: &[Side], parts: &[Ident], e: &Expr) -> Result<(usize, (String, SqlType)), SqlError> {
    if let [first, rest @ ..] = parts {
        if let Some(i) = sides.iter().position(|s| s.alias == first.value) {
            if !rest.is_empty() {
                return resolve(&sides[i].stream, rest, e).map(|c| (i, c));
            }
        }
    }
    let found: Vec<_> = sides
        .iter()
        .enumerate()
        .filter_map(|(i, s)| resolve(&s.stream, parts, e).ok().map(|c| (i, c)))
        .collect();
    let path = || {
        parts
            .iter()
            .map(|p| p.value.as_str())
            .collect::<Vec<_>>()
            .join(".")
    };
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(SqlError::span(
            e.span(),
            format!(
                "no column `{}` on either side of the join ({})",
                path(),
                sides
                    .iter()
                    .map(|s| s.alias.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
        _ => Err(SqlError::span(
            e.span(),
            format!(
                "column `{}` is on both sides of the join: name it as alias.column",
                path()
            ),
        )),
    }
}

/// A scope that notes which sides a condition reads.
struct Reads<'s> {
    sides: &'s [Side],
    read: [bool; 2],
}

impl Scope for Reads<'_> {
    fn column(&mut self, parts: &[Ident], e: &Expr) -> Result<(String, SqlType), SqlError> {
        let (i, c) = pick(self.sides, parts, e)?;
        if let Some(r) = self.read.get_mut(i) {
            *r = true;
        }
        Ok(c)
    }
    fn aggregate(
        &mut self,
        _f: &Function,
        _e: &Expr,
    ) -> Result<Option<(String, SqlType)>, SqlError> {
        Ok(None)
    }
}

/// The side `cond` reads alone, if it reads exactly one (a condition that does not compile is
/// left where it is, to be reported against the join).
fn only_side(cond: &Expr, sides: &[Side; 2]) -> Option<usize> {
    let mut reads = Reads {
        sides,
        read: [false; 2],
    };
    translate(cond, &mut reads).ok()?;
    match reads.read {
        [true, false] => Some(0),
        [false, true] => Some(1),
        _ => None,
    }
}

impl Compiler {
    /// Splits an inner join's other conditions: those that read one side only filter that side
    /// before the join (as Flink's planner pushes them down), so the join keeps fewer rows; the
    /// rest are returned, to filter the joined rows.
    pub(super) fn push_down<'e>(
        &mut self,
        mut sides: [Side; 2],
        conds: Vec<&'e Expr>,
        base: &str,
    ) -> Result<([Side; 2], Vec<&'e Expr>), SqlError> {
        let mut own: [Vec<&Expr>; 2] = [Vec::new(), Vec::new()];
        let mut kept = Vec::new();
        for c in conds {
            match only_side(c, &sides) {
                Some(i) => own[i].push(c),
                None => kept.push(c),
            }
        }
        for (i, conds) in own.iter().enumerate() {
            if conds.is_empty() {
                continue;
            }
            let text = and_of(
                conds,
                &mut JoinScope {
                    sides: std::slice::from_ref(&sides[i]),
                },
            )?;
            let name = format!("{base}_{}where", ["l", "r"][i]);
            self.push_filter(&name, &sides[i].stream.name, &text);
            sides[i].stream.name = name;
        }
        Ok((sides, kept))
    }

    /// Splits an outer join's other conditions in ON. One that reads the side whose every row
    /// comes out anyway (LEFT's left, RIGHT's right, both of FULL) decides only whether a row may
    /// match: it gates that side's key (returned per side, for [`Compiler::keyed`]), since a row
    /// whose key is NULL matches nothing and is emitted NULL-padded. One that reads the other
    /// side filters it before the join, as Flink pushes it down. Those that read both sides are
    /// returned.
    pub(super) fn outer_conditions<'e>(
        &mut self,
        outer: [bool; 2],
        mut sides: [Side; 2],
        conds: Vec<&'e Expr>,
        base: &str,
    ) -> Result<super::Split<'e>, SqlError> {
        let mut gates: [Vec<&Expr>; 2] = [Vec::new(), Vec::new()];
        let mut filters: [Vec<&Expr>; 2] = [Vec::new(), Vec::new()];
        let mut both = Vec::new();
        for c in conds {
            match only_side(c, &sides) {
                Some(i) if outer[i] => gates[i].push(c),
                Some(i) => filters[i].push(c),
                None => both.push(c),
            }
        }
        for (i, conds) in filters.iter().enumerate() {
            if conds.is_empty() {
                continue;
            }
            let one = std::slice::from_ref(&sides[i]);
            let text = and_of(conds, &mut JoinScope { sides: one })?;
            let name = format!("{base}_{}where", ["l", "r"][i]);
            self.push_filter(&name, &sides[i].stream.name, &text);
            sides[i].stream.name = name;
        }
        Ok((sides, gates, both))
    }

    /// The join's other conditions: an inner join's that read one side filter it (the rest are
    /// returned, to filter the pairs); an outer join's go as [`Compiler::outer_conditions`] says.
    pub(super) fn split_conditions<'e>(
        &mut self,
        kind: super::Kind,
        sides: [Side; 2],
        rest: Vec<&'e Expr>,
        base: &str,
    ) -> Result<super::Split<'e>, SqlError> {
        if kind == super::Kind::Inner {
            let (sides, rest) = self.push_down(sides, rest, base)?;
            return Ok((sides, [Vec::new(), Vec::new()], rest));
        }
        let outer = [
            matches!(kind, super::Kind::Left | super::Kind::Full),
            matches!(kind, super::Kind::Right | super::Kind::Full),
        ];
        self.outer_conditions(outer, sides, rest, base)
    }
}
