//! Flink's window Top-N: `SELECT ... FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY
//! window_start, window_end[, k] ORDER BY x DESC[, ...]) AS rn FROM <window aggregation>) WHERE
//! rn <= N` becomes a `top_n` transform: per window (and key), the N best rows, ranked into `rn`,
//! once the watermark has passed the window. Ties on every ORDER BY column are ranked by the
//! row's text (Flink leaves them in arrival order): add a column to ORDER BY to rank them as you
//! mean.

use std::ops::ControlFlow;

use crate::config::{TopNConfig, TransformConfig};
use crate::operators::rank::config::{RankConfig, Ties};
use sqlparser::ast::{
    visit_expressions, Expr, OrderBySort, Select, SelectItem, Spanned, WindowSpec,
};

use super::dedupe::top_bound;
use super::expr::{is_plain_name, unsupported};
use super::query::{items, ColumnScope, Item};
use super::{Col, Compiler, SqlError, SqlType, Stream};

impl Compiler {
    pub(super) fn window_top_n(
        &mut self,
        sel: &Select,
        spec: &WindowSpec,
        rn: String,
        input: Stream,
        call: &Expr,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        if !input.window {
            return Err(SqlError::span(call.span(), "a window Top-N ranks a window aggregation's results (FROM (SELECT window_start, window_end, ... GROUP BY window_start, window_end, ...)); a Top-N over a window table function's raw rows is not supported yet"));
        }
        let (keys, order) = rank_fields(spec, &input, call, "a window Top-N")?;
        let (n, conds) = rank_bound(sel, &rn, "a window Top-N", "window")?;
        let name = format!("{base}_top_n");
        let table = TransformConfig::TopN(TopNConfig {
            inputs: vec![input.name.clone()],
            partition_by: keys,
            order_by: order,
            n,
            rank_field: Some(rn.clone()),
            late_events: None,
        });
        self.push_transform(&name, table);
        let mut columns = input.columns.clone();
        columns.push(Col {
            expr: rn.clone(),
            name: rn,
            ty: SqlType::Integer,
        });
        let ranked = Stream {
            name,
            columns,
            time: None,
            window: true,
            updating: false,
        };
        let ranked = self.filter_all(&conds, ranked, &format!("{base}_where"))?;
        let mut scope = ColumnScope::new(&ranked);
        let items = items(sel, &ranked, &mut scope)?;
        Ok((ranked, items))
    }
}

impl Compiler {
    /// Flink's Top-N over a whole stream: `SELECT ... FROM (SELECT *, ROW_NUMBER() OVER
    /// (PARTITION BY k ORDER BY x DESC) AS rn FROM t) WHERE rn <= N` becomes a `rank`, an
    /// updating result. The rank is written only when the query reads `rn` (as Flink drops an
    /// unread row number, and with it the updates of rows that only move within the top N).
    pub(super) fn whole_top_n(
        &mut self,
        sel: &Select,
        spec: &WindowSpec,
        rn: String,
        input: Stream,
        call: &Expr,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let (keys, order) = rank_fields(spec, &input, call, "a Top-N")?;
        let (n, conds) = rank_bound(sel, &rn, "a Top-N", "partition")?;
        let read = reads_rank(sel, &conds, &rn);
        // Keep-last deduplication: the last of equal times replaces, as Flink's last arrival.
        let time = input
            .time
            .map(|i| format!("{} desc", input.columns[i].expr));
        let ties = match (n, order.as_slice(), time) {
            (1, [o], Some(t)) if *o == t => Ties::Later,
            _ => Ties::Earlier,
        };
        let name = format!("{base}_rank");
        let table = TransformConfig::Rank(RankConfig {
            inputs: vec![input.name.clone()],
            partition_by: keys,
            order_by: order,
            n,
            rank_field: read.then(|| rn.clone()),
            ties,
        });
        self.push_transform(&name, table);
        let mut columns = input.columns.clone();
        if read {
            columns.push(Col {
                expr: rn.clone(),
                name: rn,
                ty: SqlType::Integer,
            });
        }
        let ranked = Stream {
            name,
            columns,
            time: None,
            window: false,
            updating: true,
        };
        let ranked = self.filter_all(&conds, ranked, &format!("{base}_where"))?;
        let mut scope = ColumnScope::new(&ranked);
        let items = items(sel, &ranked, &mut scope)?;
        Ok((ranked, items))
    }
}

/// The PARTITION BY and ORDER BY fields of a ranking ROW_NUMBER, as `partition_by` and
/// `order_by` write them (column names only).
fn rank_fields(
    spec: &WindowSpec,
    input: &Stream,
    call: &Expr,
    what: &str,
) -> Result<(Vec<String>, Vec<String>), SqlError> {
    let path = |e: &Expr, clause: &str| -> Result<String, SqlError> {
        let Expr::Identifier(id) = e else {
            return Err(unsupported(
                e,
                &format!("{clause} other than a column name is"),
            ));
        };
        match input.columns.iter().find(|c| c.name == id.value) {
            Some(c) if c.expr.split('.').all(is_plain_name) => Ok(c.expr.clone()),
            Some(_) => Err(unsupported(e, &format!("{clause} a computed column is"))),
            None => Err(SqlError::span(
                e.span(),
                format!("no column `{}`", id.value),
            )),
        }
    };
    let mut keys = Vec::new();
    for p in &spec.partition_by {
        keys.push(path(p, "PARTITION BY")?);
    }
    if spec.order_by.is_empty() {
        return Err(SqlError::span(
            call.span(),
            format!("{what} needs ORDER BY"),
        ));
    }
    let mut order = Vec::new();
    for o in &spec.order_by {
        if o.options.nulls_first.is_some() {
            return Err(unsupported(
                &o.expr,
                "NULLS FIRST/LAST is (a NULL ranks below every value)",
            ));
        }
        let dir = match o.options.sort {
            Some(OrderBySort::Desc) => " desc",
            _ => "",
        };
        order.push(format!("{}{dir}", path(&o.expr, "ORDER BY")?));
    }
    Ok((keys, order))
}

/// The N of `WHERE rn <= N` (the tightest bound), and the query's other conditions, which
/// filter the ranked rows.
fn rank_bound<'s>(
    sel: &'s Select,
    rn: &str,
    what: &str,
    per: &str,
) -> Result<(usize, Vec<&'s Expr>), SqlError> {
    let mut conds = Vec::new();
    super::join::conjuncts_of(sel.selection.as_ref(), &mut conds);
    let bound = conds.iter().filter_map(|c| top_bound(c, rn)).min();
    let Some(n) = bound else {
        return Err(SqlError::span(
            sel.select_token.0.span,
            format!("{what} needs WHERE {rn} <= N (or {rn} < N, {rn} = 1)"),
        ));
    };
    conds.retain(|c| top_bound(c, rn).is_none());
    if n > TopNConfig::MAX_N as i64 {
        return Err(SqlError::span(
            sel.select_token.0.span,
            format!("{what} keeps at most {} rows per {per}", TopNConfig::MAX_N),
        ));
    }
    Ok((n as usize, conds))
}

/// Whether the query reads the row number beyond its bound: in its select list (`*` included)
/// or another condition.
fn reads_rank(sel: &Select, conds: &[&Expr], rn: &str) -> bool {
    let mut found = false;
    let mut look = |e: &Expr| {
        if matches!(e, Expr::Identifier(i) if i.value == rn) {
            found = true;
        }
        ControlFlow::<()>::Continue(())
    };
    for item in &sel.projection {
        match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                let _ = visit_expressions(e, &mut look);
            }
            _ => return true,
        }
    }
    for c in conds {
        let _ = visit_expressions(*c, &mut look);
    }
    found
}
