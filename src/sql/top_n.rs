//! Flink's window Top-N: `SELECT ... FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY
//! window_start, window_end[, k] ORDER BY x DESC[, ...]) AS rn FROM <window aggregation>) WHERE
//! rn <= N` becomes a `top_n` transform: per window (and key), the N best rows, ranked into `rn`,
//! once the watermark has passed the window. Ties on every ORDER BY column are ranked by the
//! row's text (Flink leaves them in arrival order): add a column to ORDER BY to rank them as you
//! mean.

use crate::config::{TopNConfig, TransformConfig};
use sqlparser::ast::{Expr, OrderBySort, Select, Spanned, WindowSpec};

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
        let path = |e: &Expr, what: &str| -> Result<String, SqlError> {
            let Expr::Identifier(id) = e else {
                return Err(unsupported(
                    e,
                    &format!("{what} other than a column name is"),
                ));
            };
            match input.columns.iter().find(|c| c.name == id.value) {
                Some(c) if c.expr.split('.').all(is_plain_name) => Ok(c.expr.clone()),
                Some(_) => Err(unsupported(e, &format!("{what} a computed column is"))),
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
            return Err(SqlError::span(call.span(), "a window Top-N needs ORDER BY"));
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
        let mut conds = Vec::new();
        super::join::conjuncts_of(sel.selection.as_ref(), &mut conds);
        // The tightest upper bound is N; the other conditions on the rank (a lower bound, say)
        // filter the ranked rows.
        let bound = conds.iter().filter_map(|c| top_bound(c, &rn)).min();
        let Some(n) = bound else {
            return Err(SqlError::span(
                sel.select_token.0.span,
                format!("a window Top-N needs WHERE {rn} <= N (or {rn} < N, {rn} = 1)"),
            ));
        };
        conds.retain(|c| top_bound(c, &rn).is_none());
        if n > TopNConfig::MAX_N as i64 {
            return Err(SqlError::span(
                sel.select_token.0.span,
                format!(
                    "a window Top-N keeps at most {} rows per window",
                    TopNConfig::MAX_N
                ),
            ));
        }
        let name = format!("{base}_top_n");
        let table = TransformConfig::TopN(TopNConfig {
            inputs: vec![input.name.clone()],
            partition_by: keys,
            order_by: order,
            n: n as usize,
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
