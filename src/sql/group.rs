//! A GROUP BY without a window table function (or aggregates without any GROUP BY): Flink's
//! group aggregate, an updating result. `SELECT keys, aggregates FROM t [WHERE ..] GROUP BY keys
//! [HAVING ..]` becomes a filter for `WHERE`, a `group_aggregate` transform whose aggregates are
//! named `_a0`, `_a1`, ..., and a filter for `HAVING`. Its rows have no time attribute, as in
//! Flink, so no window or time-bounded join can read them.

use std::ops::ControlFlow;

use sqlparser::ast::{
    visit_expressions_mut, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments,
    GroupByExpr, Ident, Select, SelectItem, Spanned,
};

use super::expr::{translate, Scope, AGGREGATES};
use super::query::{items, resolve, ColumnScope, Item};
use super::window::{group_keys, WindowScope};
use super::{Col, Compiler, SqlError, SqlType, Stream};
use crate::config::{HotKeyMode, HotKeysConfig, OrderedTable, TransformConfig};
use crate::operators::group_agg::config::GroupAggregateConfig;
use crate::operators::group_agg::values;

impl Compiler {
    /// `SELECT ... FROM stream [WHERE ...] GROUP BY keys [HAVING ...]`.
    pub(super) fn grouped(
        &mut self,
        sel: &Select,
        input: Stream,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let (mut hot_keys, hinted) = self.group_hot_keys(&input)?;
        let input = self.filter(sel.selection.as_ref(), input, &format!("{base}_where"))?;
        let (rewritten, input) = self.computed(sel, input, base)?;
        let sel = rewritten.as_ref().unwrap_or(sel);
        let keys = group_keys(sel, &input, false)?;
        let mut scope = WindowScope {
            input: &input,
            keys: &keys,
            aggregates: Vec::new(),
            windowed: false,
            no_values: None,
        };
        let items = items(sel, &input, &mut scope)?;
        let having = match &sel.having {
            Some(h) => Some(translate(h, &mut scope)?.0),
            None => None,
        };
        let mut aggregates: Vec<(String, String)> = scope
            .aggregates
            .iter()
            .map(|(n, a, _)| (n.clone(), a.clone()))
            .collect();
        if aggregates.is_empty() {
            // A GROUP BY without aggregates gives the distinct keys; the operator needs one: a
            // count no output column reads.
            aggregates.push(("_rows".into(), "count()".into()));
        }
        one_phase_for_values(&mut hot_keys, hinted, &aggregates);
        let name = format!("{base}_group");
        let table = GroupAggregateConfig {
            inputs: vec![input.name.clone()],
            group_by: keys.iter().map(|k| k.expr.clone()).collect(),
            aggregates: OrderedTable(aggregates),
            hot_keys,
        };
        self.push_transform(&name, TransformConfig::GroupAggregate(table));
        let mut out = Stream {
            name,
            columns: keys.clone(),
            time: None,
            window: false,
            updating: true,
        };
        if let Some(h) = having {
            let name = format!("{base}_having");
            self.push_filter(&name, &out.name, &h);
            out.name = name;
        }
        Ok((out, items))
    }
}

impl Compiler {
    /// The `hot_keys` of a group aggregate reading `input`: a `sluice.hot_keys` hint on the
    /// source table it reads, else `auto` where Flink would aggregate in two phases
    /// (`settings::TwoPhase`) and the input is a source (phase one runs where records are read;
    /// an updating source's group aggregate stays one-phase, as its partials could not carry
    /// retractions).
    /// Also says whether a hint set it.
    fn group_hot_keys(&mut self, input: &Stream) -> Result<(HotKeysConfig, bool), SqlError> {
        let source = (self.sources.iter())
            .find(|(_, (_, s))| s.name == input.name)
            .map(|(table, (_, s))| (table.clone(), s.updating));
        let Some((table, updating)) = source else {
            return Ok((HotKeysConfig::default(), false));
        };
        let (mine, others): (Vec<_>, Vec<_>) = std::mem::take(&mut self.hints)
            .into_iter()
            .partition(|h| h.table == table);
        self.hints = others;
        let hinted = super::hints::window_settings(&mine)?;
        if let Some(h) = mine.first() {
            if hinted.lateness_ms.is_some() || hinted.late_table.is_some() {
                return Err(SqlError::span(h.span, "sluice.allowed_lateness and sluice.late_events set a window; a GROUP BY without one has no lateness (it takes every row)"));
            }
        }
        if let Some(h) = hinted.hot_keys {
            return Ok((h, true));
        }
        let mut h = HotKeysConfig::default();
        if self.two_phase.on() && !updating {
            h.mode = HotKeyMode::Auto;
        }
        Ok((h, false))
    }
}

/// Under the session's two-phase settings (not a hint), aggregates that keep values as written
/// (FIRST_VALUE, LAST_VALUE, MIN/MAX of strings) keep the aggregate one-phase, as Flink's
/// planner does for aggregates that cannot merge.
fn one_phase_for_values(
    hot_keys: &mut HotKeysConfig,
    hinted: bool,
    aggregates: &[(String, String)],
) {
    let values = aggregates.iter().any(|(_, e)| values::parse(e).is_some());
    if values && !hinted {
        *hot_keys = HotKeysConfig::default();
    }
}

impl Compiler {
    /// GROUP BY expressions, aggregates over expressions and aggregates with `FILTER (WHERE c)`
    /// read values a select computes before the aggregate: `_g0`, `_g1`, ... for the GROUP BY
    /// expressions (each use of one in the select list or HAVING becomes that column), `_e0`,
    /// ... for an aggregate's argument expression, and `_f0`, ... for each filtered aggregate's
    /// argument, NULL where `c` is not true (so `COUNT(*) FILTER (WHERE c)` counts the non-NULL
    /// `_f0`, as every aggregate skips NULL). `None` when there is nothing to compute.
    fn computed(
        &mut self,
        sel: &Select,
        input: Stream,
        base: &str,
    ) -> Result<(Option<Select>, Stream), SqlError> {
        let mut sel = sel.clone();
        let mut fields: Vec<(String, String, SqlType)> = Vec::new();
        // FILTER conditions first, over the input's columns: one may read a GROUP BY expression,
        // which the select computing both could not read as `_gN`.
        let mut filtered = |x: &mut Expr| -> ControlFlow<SqlError> {
            match filter_field(x, &input, fields.len()) {
                Ok(Some(f)) => fields.push(f),
                Ok(None) => {}
                Err(e) => return ControlFlow::Break(e),
            }
            ControlFlow::Continue(())
        };
        if let ControlFlow::Break(e) = outputs(&mut sel.projection, &mut sel.having, &mut filtered)
        {
            return Err(e);
        }
        let grouped: Vec<Expr> = match &sel.group_by {
            GroupByExpr::Expressions(exprs, _) => exprs.clone(),
            GroupByExpr::All(_) => Vec::new(),
        };
        let mut computed_args = |x: &mut Expr| -> ControlFlow<SqlError> {
            match argument_field(x, &input, &grouped, fields.len()) {
                Ok(Some(f)) => fields.push(f),
                Ok(None) => {}
                Err(e) => return ControlFlow::Break(e),
            }
            ControlFlow::Continue(())
        };
        if let ControlFlow::Break(e) =
            outputs(&mut sel.projection, &mut sel.having, &mut computed_args)
        {
            return Err(e);
        }
        if let GroupByExpr::Expressions(exprs, _) = &mut sel.group_by {
            for e in exprs.iter_mut() {
                if matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
                    continue;
                }
                let (text, ty) = translate(e, &mut ColumnScope::new(&input))?;
                let name = format!("_g{}", fields.len());
                let column = Expr::Identifier(Ident::new(&name));
                let target = e.clone();
                let _ = outputs(&mut sel.projection, &mut sel.having, &mut |x| {
                    if *x == target {
                        *x = column.clone();
                    }
                    ControlFlow::<()>::Continue(())
                });
                *e = column;
                fields.push((name, text, ty));
            }
        }
        if fields.is_empty() {
            return Ok((None, input));
        }
        // Every input column passes through by name, then the computed ones.
        let name = format!("{base}_computed");
        let mut columns: Vec<Col> = input
            .columns
            .iter()
            .map(|c| Col {
                expr: c.name.clone(),
                ..c.clone()
            })
            .collect();
        let mut select: Vec<(String, String)> = input
            .columns
            .iter()
            .map(|c| (c.name.clone(), c.expr.clone()))
            .collect();
        for (n, text, ty) in fields {
            select.push((n.clone(), text));
            columns.push(Col {
                name: n.clone(),
                ty,
                expr: n,
            });
        }
        self.push_transform(&name, super::parts::select(&input.name, select));
        let out = Stream {
            name,
            columns,
            ..input
        };
        Ok((Some(sel), out))
    }
}

/// Visits every expression of a select list and its HAVING, in that order.
fn outputs<E>(
    projection: &mut Vec<SelectItem>,
    having: &mut Option<Expr>,
    f: &mut dyn FnMut(&mut Expr) -> ControlFlow<E>,
) -> ControlFlow<E> {
    visit_expressions_mut(projection, &mut *f)?;
    visit_expressions_mut(having, f)
}

/// An aggregate call with `FILTER (WHERE c)`: its argument becomes the computed column `_fN`
/// (`c ? arg : NULL`, `1` for `COUNT(*)`) and the call reads that column; returns the column.
fn filter_field(
    x: &mut Expr,
    input: &Stream,
    n: usize,
) -> Result<Option<(String, String, SqlType)>, SqlError> {
    let Expr::Function(f) = x else {
        return Ok(None);
    };
    let Some(cond) = f.filter.take() else {
        return Ok(None);
    };
    let FunctionArguments::List(list) = &mut f.args else {
        return Err(SqlError::span(
            cond.span(),
            "FILTER needs an aggregate with an argument list",
        ));
    };
    let mut scope = ColumnScope::new(input);
    let (c, _) = translate(&cond, &mut scope)?;
    let (arg, ty) = match list.args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] => ("1".to_string(), SqlType::Integer),
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(a))] => translate(a, &mut scope)?,
        _ => {
            return Err(SqlError::span(
                cond.span(),
                "FILTER applies to an aggregate of one argument",
            ))
        }
    };
    let name = format!("_f{n}");
    list.args = vec![FunctionArg::Unnamed(FunctionArgExpr::Expr(
        Expr::Identifier(Ident::new(&name)),
    ))];
    let text = format!("(coalesce({c}, false) ? ({arg}) : (null))");
    Ok(Some((name, text, ty)))
}

/// An aggregate over an expression (`MAX(DATE_FORMAT(dateTime, 'HH:mm'))`): the expression
/// becomes the computed column `_eN` and the call reads that column; returns the column. A
/// column, a literal, or a GROUP BY expression (which becomes its `_gN`) stays as it is.
fn argument_field(
    x: &mut Expr,
    input: &Stream,
    grouped: &[Expr],
    n: usize,
) -> Result<Option<(String, String, SqlType)>, SqlError> {
    let Expr::Function(f) = x else {
        return Ok(None);
    };
    let name = f.name.to_string().to_ascii_uppercase();
    if f.over.is_some() || !AGGREGATES.contains(&name.as_str()) {
        return Ok(None);
    }
    let FunctionArguments::List(list) = &mut f.args else {
        return Ok(None);
    };
    let [FunctionArg::Unnamed(FunctionArgExpr::Expr(arg))] = list.args.as_mut_slice() else {
        return Ok(None);
    };
    if matches!(
        arg,
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) | Expr::Value(_)
    ) || grouped.contains(arg)
    {
        return Ok(None);
    }
    let (text, ty) = translate(arg, &mut ColumnScope::new(input))?;
    let name = format!("_e{n}");
    *arg = Expr::Identifier(Ident::with_span(arg.span(), &name));
    Ok(Some((name, text, ty)))
}

/// Whether the select list of `sel` calls an aggregate function (`SELECT COUNT(*) FROM t`: one
/// global group): each item is translated once with a scope that notes aggregates; errors are
/// left for the real translation to report.
pub(super) fn has_aggregates(sel: &Select, input: &Stream) -> bool {
    let mut probe = Probe { input, seen: false };
    let _ = items(sel, input, &mut probe);
    probe.seen
}

struct Probe<'s> {
    input: &'s Stream,
    seen: bool,
}

impl Scope for Probe<'_> {
    fn column(&mut self, parts: &[Ident], e: &Expr) -> Result<(String, SqlType), SqlError> {
        resolve(self.input, parts, e)
    }

    fn aggregate(
        &mut self,
        _f: &Function,
        _e: &Expr,
    ) -> Result<Option<(String, SqlType)>, SqlError> {
        self.seen = true;
        Ok(Some(("0".into(), SqlType::Integer)))
    }
}
