//! ROW_NUMBER queries. Flink's deduplication query: `SELECT ... FROM (SELECT *, ROW_NUMBER() OVER
//! (PARTITION BY k ORDER BY rt ASC) AS rn FROM t) WHERE rn = 1` under `table.exec.state.ttl`
//! becomes a `dedupe` transform keyed on `k` (the first row of each key in event time passes,
//! the key remembered for the TTL in event time: an append-only result). One partitioned by
//! `window_start, window_end` over a window aggregation is a window Top-N (`sql::top_n`); a
//! view keeping the last row per key by time is a versioned table for temporal joins. Every
//! other ranking, keep-first without a TTL and keep-last included, is a Top-N over the whole
//! stream (`rank`), an updating result, as in Flink.

use crate::config::{DedupeConfig, TransformConfig};
use sqlparser::ast::{
    BinaryOperator, Expr, Function, Ident, OrderBySort, Query, Select, SelectItem, SetExpr,
    Spanned, Value, WindowType,
};

use super::expr::unsupported;
use super::query::{ColumnScope, Item};
use super::{Col, Compiler, SqlError, SqlType, Stream};

/// The `ROW_NUMBER() OVER (...)` item of a select, with its alias, if it has one.
pub(super) fn row_number(q: &Query) -> Option<(&Function, String, usize)> {
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return None;
    };
    sel.projection.iter().enumerate().find_map(|(i, item)| {
        let (e, alias) = match item {
            SelectItem::ExprWithAlias { expr, alias } => (expr, alias.value.clone()),
            SelectItem::UnnamedExpr(e) => (e, format!("EXPR${i}")),
            _ => return None,
        };
        match e {
            Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("ROW_NUMBER") => {
                Some((f, alias, i))
            }
            _ => None,
        }
    })
}

/// Whether `q` is `SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (...) ... ) [WHERE ...]`: a
/// ROW_NUMBER query at the top, the shape a versioned view has.
pub(super) fn ranks_at_top(q: &Query) -> bool {
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return false;
    };
    match sel.from.as_slice() {
        [from] if from.joins.is_empty() => matches!(
            &from.relation,
            sqlparser::ast::TableFactor::Derived { subquery, .. } if row_number(subquery).is_some()
        ),
        _ => false,
    }
}

/// The PARTITION BY columns of a deduplication: their names and the expressions that read them.
fn partition_keys(
    spec: &sqlparser::ast::WindowSpec,
    input: &Stream,
) -> Result<(Vec<String>, Vec<String>), SqlError> {
    let mut names = Vec::new();
    let mut keys = Vec::new();
    for p in &spec.partition_by {
        let Expr::Identifier(id) = p else {
            return Err(unsupported(p, "a PARTITION BY other than column names is"));
        };
        let Some(c) = input.columns.iter().find(|c| c.name == id.value) else {
            return Err(SqlError::span(
                p.span(),
                format!("no column `{}` to partition by", id.value),
            ));
        };
        keys.push(c.expr.clone());
        names.push(c.name.clone());
    }
    Ok((names, keys))
}

impl Compiler {
    /// `SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (...) AS rn FROM t) WHERE rn = 1 [AND ...]`.
    pub(super) fn deduped(
        &mut self,
        sel: &Select,
        inner: &Query,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        // Only the top query of a view may keep the last row per key: taken before the rows
        // it ranks are compiled, so a ROW_NUMBER nested in them never sees it.
        let keep_last_ok = std::mem::take(&mut self.keep_last_ok);
        let Some((f, rn, at)) = row_number(inner) else {
            return Err(SqlError::span(
                inner.span(),
                "expected ROW_NUMBER() OVER (...)",
            ));
        };
        if super::query::groups(sel) {
            return Err(SqlError::span(sel.select_token.0.span, "GROUP BY over a ROW_NUMBER query needs a window: deduplicate or rank in a view, then window the view with a window table function"));
        }
        let call = Expr::Function(f.clone());
        let Some(WindowType::WindowSpec(spec)) = &f.over else {
            return Err(SqlError::span(
                call.span(),
                "ROW_NUMBER needs OVER (PARTITION BY ... ORDER BY ...)",
            ));
        };
        if spec.window_frame.is_some() {
            return Err(unsupported(&call, "a window frame on ROW_NUMBER is"));
        }
        // The rows the ROW_NUMBER ranks: the inner query without its ROW_NUMBER column, and with
        // a column `_rkN` for each PARTITION BY or ORDER BY expression that is not one of its
        // columns' names (`B.price` over a join, as q9 ranks), which the ranking then reads.
        let mut rows = inner.clone();
        let mut spec = spec.clone();
        if let SetExpr::Select(s) = rows.body.as_mut() {
            s.projection.remove(at);
            let exprs =
                (spec.partition_by.iter_mut()).chain(spec.order_by.iter_mut().map(|o| &mut o.expr));
            for (i, e) in exprs.enumerate() {
                if !matches!(e, Expr::Identifier(_)) {
                    let alias = Ident::new(format!("_rk{i}"));
                    s.projection.push(SelectItem::ExprWithAlias {
                        expr: e.clone(),
                        alias: alias.clone(),
                    });
                    *e = Expr::Identifier(alias);
                }
            }
        }
        let spec = &spec;
        let input = self.query(&rows, &format!("{base}_rows"), None)?;
        if input.columns.iter().any(|c| c.name == rn) {
            return Err(SqlError::span(call.span(), format!("the ROW_NUMBER column `{rn}` has the name of a column it ranks: give it another alias")));
        }
        let names = |n: &str| {
            spec.partition_by
                .iter()
                .any(|p| matches!(p, Expr::Identifier(i) if i.value == n))
        };
        if names("window_start") && names("window_end") {
            return self.window_top_n(sel, spec, rn, input, &call, base);
        }
        let time = input.time_name().map(str::to_string);
        let by_time = match spec.order_by.as_slice() {
            [o] if matches!(&o.expr, Expr::Identifier(i) if Some(&i.value) == time.as_ref()) => {
                Some(matches!(o.options.sort, Some(OrderBySort::Desc)))
            }
            _ => None,
        };
        let (names, keys) = partition_keys(spec, &input)?;
        // A view that keeps the last row per key by time is a versioned table, read by temporal
        // joins; one that keeps the first, with a state TTL, an event-time dedupe. Anything else
        // ranks rows over the whole stream, as Flink's Top-N and deduplication without TTL do.
        let mut conds = Vec::new();
        super::join::conjuncts_of(sel.selection.as_ref(), &mut conds);
        let first = conds.iter().any(|c| is_first(c, &rn));
        let horizon = match (by_time, self.state_ttl) {
            (Some(true), _) if keep_last_ok && !keys.is_empty() => {
                return self.versioned(sel, input, rn, names)
            }
            (Some(false), Some(ttl)) if !keys.is_empty() && !input.updating && first => ttl,
            _ => return self.whole_top_n(sel, spec, rn, input, &call, base),
        };
        conds.retain(|c| !is_first(c, &rn));
        let name = format!("{base}_dedupe");
        let table = TransformConfig::Dedupe(DedupeConfig {
            inputs: vec![input.name.clone()],
            key: keys,
            horizon: super::parts::ms(horizon),
            late_events: None,
            hot_keys: None,
        });
        self.push_transform(&name, table);
        let mut columns = input.columns.clone();
        columns.push(Col {
            name: rn,
            ty: SqlType::Integer,
            expr: "1".into(),
        });
        let deduped = Stream {
            name,
            columns,
            time: input.time,
            window: false,
            updating: false,
        };
        let deduped = self.filter_all(&conds, deduped, &format!("{base}_where"))?;
        let mut scope = ColumnScope::new(&deduped);
        let items = super::query::items(sel, &deduped, &mut scope)?;
        Ok((deduped, items))
    }
}

impl Compiler {
    /// Flink's versioned view, `ROW_NUMBER() OVER (PARTITION BY k ORDER BY rt DESC) ... WHERE
    /// rn = 1`: the last row per key as of each time, which is what a temporal join reads from a
    /// versioned table. Its rows are every version (a row is valid from its time until the next
    /// of its key), so nothing is compiled here: the view's stream is the rows themselves, with
    /// `k` as their primary key, and only a temporal join may read it (`stream_of`).
    fn versioned(
        &mut self,
        sel: &Select,
        input: Stream,
        rn: String,
        keys: Vec<String>,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let mut conds = Vec::new();
        super::join::conjuncts_of(sel.selection.as_ref(), &mut conds);
        let first = conds.iter().filter(|c| is_first(c, &rn)).count();
        if first == 0 || conds.len() > first {
            return Err(SqlError::span(sel.select_token.0.span, format!("a versioned view keeps the last row per key with WHERE {rn} = 1 and nothing else: filter the rows it ranks, inside the subquery")));
        }
        self.keep_last_keys = Some(keys);
        let mut columns = input.columns.clone();
        columns.push(Col {
            name: rn,
            ty: SqlType::Integer,
            expr: "1".into(),
        });
        let versions = Stream { columns, ..input };
        let mut scope = ColumnScope::new(&versions);
        let items = super::query::items(sel, &versions, &mut scope)?;
        Ok((versions, items))
    }
}

/// `rn = 1`, `rn <= 1` or `rn < 2` (either way round).
fn is_first(e: &Expr, rn: &str) -> bool {
    top_bound(e, rn) == Some(1)
}

/// The N of `rn <= N`, `rn < N + 1` or `rn = 1` (either way round).
pub(super) fn top_bound(e: &Expr, rn: &str) -> Option<i64> {
    let Expr::BinaryOp { left, op, right } = e else {
        return None;
    };
    let is_rn = |x: &Expr| matches!(x, Expr::Identifier(i) if i.value == rn);
    let num = |x: &Expr| match x {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse::<i64>().ok(),
            _ => None,
        },
        _ => None,
    };
    let (op, n) = if is_rn(left) {
        (op.clone(), num(right))
    } else if is_rn(right) {
        // `N >= rn` is `rn <= N`; `N <= rn` is `rn >= N`, a lower bound.
        let flipped = match op {
            BinaryOperator::Gt => BinaryOperator::Lt,
            BinaryOperator::GtEq => BinaryOperator::LtEq,
            BinaryOperator::Lt => BinaryOperator::Gt,
            BinaryOperator::LtEq => BinaryOperator::GtEq,
            other => other.clone(),
        };
        (flipped, num(left))
    } else {
        return None;
    };
    match (op, n?) {
        (BinaryOperator::Eq, 1) => Some(1),
        (BinaryOperator::LtEq, n) if n >= 1 => Some(n),
        (BinaryOperator::Lt, n) if n >= 2 => Some(n - 1),
        _ => None,
    }
}
