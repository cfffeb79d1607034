//! Joins in a `FROM` clause: an interval join (`a JOIN b ON a.k = b.k AND b.rt BETWEEN a.rt -
//! INTERVAL .. AND a.rt + INTERVAL ..`, or the same conditions in `WHERE` over `FROM a, b`; inner,
//! LEFT, RIGHT and FULL OUTER) becomes an `interval_join` transform; a temporal join (`a JOIN t FOR
//! SYSTEM_TIME AS OF a.rt ON a.k = t.pk`, inner or LEFT) an event-time `temporal_join`; a
//! regular join (no time bounds, any kind) a `join` (`regular`); a GROUP BY over the join in the
//! same SELECT a group aggregate over its flattened rows (`grouped`). In an inner join, the other conditions that read one side filter it before the join; the rest
//! become a filter after the join. Within the query, a side's columns are read from
//! where the join writes them (`left.`/`right.`, or `table.` for the versioned table).

use super::parts::signed_ms;
use crate::config::{IntervalJoinConfig, IntervalJoinKind, TemporalJoinKind, TransformConfig};
use sqlparser::ast::{
    BinaryOperator, Expr, Join, JoinConstraint, JoinOperator, Select, Spanned, TableFactor,
    TableVersion, TableWithJoins,
};

use sqlparser::tokenizer::Span;

mod bounds;
mod chain;
mod grouped;
mod regular;
mod scope;
mod temporal;

use super::expr::{is_plain_name, unsupported};
use super::query::{and_of, groups, items, Item};
use super::{Col, Compiler, SqlError, Stream};
use bounds::{window_pair, Bounds};
use scope::JoinScope;

/// What a join's conditions say: its kind, the conditions it keys and bounds on (and, for an
/// inner join, filters after), those of `WHERE` after an outer join, and where to point errors.
struct Conditions<'e> {
    kind: Kind,
    conds: Vec<&'e Expr>,
    post: Vec<&'e Expr>,
    at: Span,
}

/// What a regular join takes over from the conditions: kind, keys, other conditions, those of
/// `WHERE` after it, and where to point errors.
type RegularParts<'k, 'e> = (Kind, &'k [(Col, Col)], Vec<&'e Expr>, Vec<&'e Expr>, Span);

/// A join's sides after its other conditions are placed, the conditions that gate each side's
/// key (an outer side's, in ON), and those left for the joined rows.
type Split<'e> = ([Side; 2], [Vec<&'e Expr>; 2], Vec<&'e Expr>);

/// One side of a join: the name the query calls it by and its stream.
struct Side {
    alias: String,
    stream: Stream,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Inner,
    Left,
    Right,
    Full,
}

impl Kind {
    /// The interval (or regular) join's kind.
    fn interval(self) -> IntervalJoinKind {
        match self {
            Kind::Inner => IntervalJoinKind::Inner,
            Kind::Left => IntervalJoinKind::Left,
            Kind::Right => IntervalJoinKind::Right,
            Kind::Full => IntervalJoinKind::Full,
        }
    }

    /// The temporal join's kind (only inner and left ones are made).
    fn temporal(self) -> TemporalJoinKind {
        match self {
            Kind::Left => TemporalJoinKind::Left,
            _ => TemporalJoinKind::Inner,
        }
    }
}

impl Compiler {
    /// `SELECT ... FROM a JOIN b ON ...` or `FROM a, b WHERE ...`.
    pub(super) fn joined(
        &mut self,
        sel: &Select,
        from: &[TableWithJoins],
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let (left_tf, right_tf, kind, on) = match from {
            [one] => match one.joins.as_slice() {
                [j] => {
                    let (kind, on) = join_kind(j)?;
                    (&one.relation, &j.relation, kind, Some(on))
                }
                _ => return self.chained(sel, one, base),
            },
            [a, b] if a.joins.is_empty() && b.joins.is_empty() => {
                (&a.relation, &b.relation, Kind::Inner, None)
            }
            _ => return Err(unsupported(&from[1], "this FROM list is")),
        };
        let mut conds = Vec::new();
        if let Some(on) = on {
            conjuncts(on, &mut conds);
        }
        let mut post = Vec::new();
        if let Some(w) = &sel.selection {
            if kind == Kind::Inner {
                conjuncts(w, &mut conds);
            } else {
                conjuncts(w, &mut post);
            }
        }
        let at = on
            .or(sel.selection.as_ref())
            .map_or(sel.select_token.0.span, Spanned::span);
        let c = Conditions {
            kind,
            conds,
            post,
            at,
        };
        let left = self.side(left_tf, &format!("{base}_lq"))?;
        if let TableFactor::Table {
            version: Some(TableVersion::ForSystemTimeAsOf(time)),
            ..
        } = right_tf
        {
            return self.temporal(sel, left, right_tf, time, c, base);
        }
        let right = self.side(right_tf, &format!("{base}_rq"))?;
        self.interval(sel, left, right, c, base)
    }

    /// A side of a join: a table, a view or a subquery, with the name the query reads it by.
    fn side(&mut self, tf: &TableFactor, base: &str) -> Result<Side, SqlError> {
        match tf {
            TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                let table = super::last_name(name);
                let stream = self.stream_of(&table, tf.span())?;
                Ok(Side {
                    alias: alias.as_ref().map_or(table, |a| a.name.value.clone()),
                    stream,
                })
            }
            TableFactor::Derived {
                subquery,
                alias: Some(alias),
                ..
            } => Ok(Side {
                alias: alias.name.value.clone(),
                stream: self.query(subquery, base, None)?,
            }),
            other => Err(unsupported(other, "this join input is")),
        }
    }

    fn interval(
        &mut self,
        sel: &Select,
        left: Side,
        right: Side,
        c: Conditions,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let Conditions {
            kind,
            conds,
            post,
            at,
        } = c;
        let mut keys: Vec<(Col, Col)> = Vec::new();
        let mut bounds = Bounds::default();
        let mut rest = Vec::new();
        // A window join: two window aggregations' results, equal on window_start and window_end
        // (and keys). Rows of one window carry its end - 1, so they meet at bounds [0, 0].
        let windowed = left.stream.window && right.stream.window;
        let mut bounds_equal = [false; 2];
        for c in conds {
            if let Some(pair) = window_pair(c, &left, &right).filter(|_| windowed) {
                bounds_equal[usize::from(pair.0.name == "window_end")] = true;
                keys.push(pair);
            } else if let Some(pair) = key_pair(c, &left, &right)? {
                keys.push(pair);
            } else if !bounds.add(c, &left, &right)? {
                rest.push(c);
            }
        }
        if bounds_equal == [true, true] && bounds.lower.is_none() && bounds.upper.is_none() {
            bounds.lower = Some(0);
            bounds.upper = Some(0);
        }
        if keys.is_empty() {
            return Err(SqlError::span(at, "a join needs an equality between the two sides' columns (a.k = b.k): a cross join is not supported"));
        }
        let (lower, upper) = match (bounds.lower, bounds.upper) {
            (Some(lower), Some(upper)) => (lower, upper),
            (None, None) => return self.regular(sel, left, right, (kind, &keys, rest, post, at), base),
            _ => return Err(SqlError::span(at, format!("an interval join needs bounds on both sides ({}.{} BETWEEN {}.{} - INTERVAL ... AND {}.{} + INTERVAL ...)", right.alias, right.stream.time_name().unwrap_or("rt"), left.alias, left.stream.time_name().unwrap_or("rt"), left.alias, left.stream.time_name().unwrap_or("rt")))),
        };
        let ([left, right], gates, rest) =
            self.split_conditions(kind, [left, right], rest, base)?;
        if let Some(both) = rest.first().filter(|_| kind != Kind::Inner) {
            return Err(unsupported(*both, "in an outer join, a condition in ON that reads both sides (other than the key equality and the time bounds) is"));
        }
        if lower > upper {
            return Err(SqlError::span(at, format!("these time bounds leave nothing to join: {}.{} - {}.{} must be at least {lower} ms and at most {upper} ms", right.alias, right.stream.time_name().unwrap_or("rt"), left.alias, left.stream.time_name().unwrap_or("rt"))));
        }
        let (left, right, on) = self.keyed(left, right, &keys, gates, base)?;
        let name = format!("{base}_join");
        let table = TransformConfig::IntervalJoin(IntervalJoinConfig {
            left: left.stream.name.clone(),
            right: right.stream.name.clone(),
            on,
            between: [signed_ms(lower), signed_ms(upper)],
            kind: kind.interval(),
            late_events: None,
            hot_keys: None,
        });
        self.push_transform(&name, table);
        // The pair carries the later of its rows' times: the right's when it can never be earlier.
        // An outer kind keeps a side's time only where that side is never NULL (an unmatched
        // row carries its own time).
        let time_side = match (lower >= 0, upper <= 0) {
            (true, _) if matches!(kind, Kind::Inner | Kind::Right) => Some(1),
            (_, true) if matches!(kind, Kind::Inner | Kind::Left) => Some(0),
            _ => None,
        };
        let sides = [
            prefixed(left, "left", time_side == Some(0)),
            prefixed(right, "right", time_side == Some(1)),
        ];
        self.finish_join(
            sel,
            sides.into(),
            (rest.into_iter().chain(post).collect(), false),
            &name,
            base,
        )
    }

    /// Both sides keyed on the same fields: the key columns themselves where both sides hold
    /// them under one path, else `_k0`, `_k1`, ... added to each side by a select.
    fn keyed(
        &mut self,
        left: Side,
        right: Side,
        keys: &[(Col, Col)],
        gates: [Vec<&Expr>; 2],
        base: &str,
    ) -> Result<(Side, Side, Vec<String>), SqlError> {
        let left = self.pathed(left, None, &format!("{base}_l"));
        let right = self.pathed(right, None, &format!("{base}_r"));
        let mut lk: Vec<String> = keys.iter().map(|(l, _)| key_expr(&left, l)).collect();
        let mut rk: Vec<String> = keys.iter().map(|(_, r)| key_expr(&right, r)).collect();
        // An outer side's conditions in ON: its key is NULL where they do not hold, so the row
        // matches nothing (and comes out NULL-padded).
        for (side, (gate, k)) in [&left, &right]
            .into_iter()
            .zip(gates.iter().zip([&mut lk, &mut rk]))
        {
            if gate.is_empty() {
                continue;
            }
            let cond = and_of(
                gate,
                &mut JoinScope {
                    sides: std::slice::from_ref(side),
                },
            )?;
            for key in k.iter_mut() {
                *key = format!("(({cond}) ? ({key}) : null)");
            }
        }
        // A key field named `left` or `right` would clash with the sides the join writes.
        if lk == rk && !lk.iter().any(|k| k == "left" || k == "right") {
            return Ok((left, right, lk));
        }
        let left = self.pathed(left, Some(&lk), &format!("{base}_lk"));
        let right = self.pathed(right, Some(&rk), &format!("{base}_rk"));
        Ok((
            left,
            right,
            (0..keys.len()).map(|i| format!("_k{i}")).collect(),
        ))
    }

    /// `side` with every column held as a field path (a select writes the columns that are
    /// computed, and the join keys as `_k0`, ... when given), so the join's output can prefix them.
    fn pathed(&mut self, side: Side, keys: Option<&[String]>, name: &str) -> Side {
        if keys.is_none() && side.stream.columns.iter().all(|c| is_path(&c.expr)) {
            return side;
        }
        let mut fields: Vec<(String, String)> = side
            .stream
            .columns
            .iter()
            .map(|c| (c.name.clone(), c.expr.clone()))
            .collect();
        for (i, k) in keys.unwrap_or(&[]).iter().enumerate() {
            fields.push((format!("_k{i}"), k.clone()));
        }
        self.push_transform(name, super::parts::select(&side.stream.name, fields));
        let columns = side
            .stream
            .columns
            .into_iter()
            .map(|c| Col {
                expr: c.name.clone(),
                ..c
            })
            .collect();
        Side {
            alias: side.alias,
            stream: Stream {
                name: name.to_string(),
                columns,
                time: side.stream.time,
                window: false,
                updating: side.stream.updating,
            },
        }
    }

    /// The joined stream, its remaining conditions as a filter, and the select items over it.
    fn finish_join(
        &mut self,
        sel: &Select,
        sides: Vec<Side>,
        (filter, updating): (Vec<&Expr>, bool),
        join: &str,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let mut scope = JoinScope { sides: &sides };
        let mut name = join.to_string();
        if !filter.is_empty() {
            let text = and_of(&filter, &mut scope)?;
            let where_name = format!("{base}_where");
            self.push_filter(&where_name, &name, &text);
            name = where_name;
        }
        let mut columns = Vec::new();
        let mut time = None;
        for s in &sides {
            if let Some(t) = s.stream.time {
                time = Some(columns.len() + t);
            }
            columns.extend(s.stream.columns.iter().cloned());
        }
        let joined = Stream {
            name,
            columns,
            time,
            window: false,
            updating,
        };
        if groups(sel) || super::group::has_aggregates(sel, &joined) {
            return self.group_join(sel, &sides, joined, base);
        }
        let items = items(sel, &joined, &mut scope)?;
        Ok((joined, items))
    }
}

/// A side whose columns are read under `prefix.` in the join's output; it keeps its time
/// attribute only where the joined row carries that time.
fn prefixed(side: Side, prefix: &str, keeps_time: bool) -> Side {
    let columns = side
        .stream
        .columns
        .into_iter()
        .map(|c| Col {
            expr: format!("{prefix}.{}", c.expr),
            ..c
        })
        .collect();
    Side {
        alias: side.alias,
        stream: Stream {
            name: side.stream.name,
            columns,
            time: side.stream.time.filter(|_| keeps_time),
            window: false,
            updating: side.stream.updating,
        },
    }
}

fn is_path(expr: &str) -> bool {
    expr.split('.').all(is_plain_name)
}

/// The field a join keys a side on: the key column's path (after `pathed`, every column is one).
fn key_expr(side: &Side, key: &Col) -> String {
    side.stream
        .columns
        .iter()
        .find(|c| c.name == key.name)
        .map_or_else(|| key.expr.clone(), |c| c.expr.clone())
}

fn join_kind(j: &Join) -> Result<(Kind, &Expr), SqlError> {
    let (kind, c) = match &j.join_operator {
        JoinOperator::Join(c) | JoinOperator::Inner(c) => (Kind::Inner, c),
        JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (Kind::Left, c),
        JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (Kind::Right, c),
        JoinOperator::FullOuter(c) => (Kind::Full, c),
        _ => return Err(unsupported(&j.relation, "this kind of join is")),
    };
    match c {
        JoinConstraint::On(e) => Ok((kind, e)),
        _ => Err(unsupported(&j.relation, "a join without ON is")),
    }
}

/// The `AND`ed conditions of a `WHERE`, if there is one.
pub(super) fn conjuncts_of<'e>(e: Option<&'e Expr>, out: &mut Vec<&'e Expr>) {
    if let Some(e) = e {
        conjuncts(e, out);
    }
}

fn conjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        Expr::Nested(inner) => conjuncts(inner, out),
        other => out.push(other),
    }
}

/// Which side a plain column reference names, and its column.
fn column_of(e: &Expr, sides: [&Side; 2]) -> Option<(usize, Col)> {
    let (alias, name) = match e {
        Expr::CompoundIdentifier(p) if p.len() == 2 => (Some(&p[0].value), &p[1].value),
        Expr::Identifier(i) => (None, &i.value),
        _ => return None,
    };
    let mut found = None;
    for (i, s) in sides.iter().enumerate() {
        if alias.is_some_and(|a| *a != s.alias) {
            continue;
        }
        if let Some(c) = s.stream.columns.iter().find(|c| &c.name == name) {
            if found.is_some() {
                return None;
            }
            found = Some((i, c.clone()));
        }
    }
    found
}

/// `a.k = b.k` between the two sides: (left column, right column).
fn key_pair(e: &Expr, l: &Side, r: &Side) -> Result<Option<(Col, Col)>, SqlError> {
    let Expr::BinaryOp {
        left,
        op: BinaryOperator::Eq,
        right,
    } = e
    else {
        return Ok(None);
    };
    let (Some((a, ca)), Some((b, cb))) = (column_of(left, [l, r]), column_of(right, [l, r])) else {
        return Ok(None);
    };
    // An equality of time attributes bounds an interval join (`a.rt = b.rt`); any other column,
    // a timestamp among them (a window's `window_start` renamed), is a key.
    let sides = [l, r];
    let attr = |i: usize, c: &Col| sides[i].stream.time_name() == Some(c.name.as_str());
    if (ca.ty.is_time() && attr(a, &ca)) || (cb.ty.is_time() && attr(b, &cb)) {
        return Ok(None);
    }
    Ok(match (a, b) {
        (0, 1) => Some((ca, cb)),
        (1, 0) => Some((cb, ca)),
        _ => None,
    })
}
