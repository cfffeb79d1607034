//! Flink's legacy group window aggregation, which Flink 2.3 still runs and older jobs are
//! written in: `GROUP BY k, TUMBLE(rt, size)` (or `HOP(rt, slide, size)`, `SESSION(rt, gap)`)
//! with `TUMBLE_START(..)`, `TUMBLE_END(..)` and `TUMBLE_ROWTIME(..)` in the SELECT. It is the
//! window table function's aggregation written another way, so it is rewritten into that form
//! (`FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(rt), size)) GROUP BY k, window_start, window_end`,
//! the auxiliary functions as `window_start`, `window_end`, `window_time`) before it is compiled;
//! a session is per group, as in Flink: the other GROUP BY columns become the session's
//! PARTITION BY. The rewrite keeps the query's own expressions, so errors still point into it.

use std::ops::ControlFlow;

use sqlparser::ast::{
    visit_expressions_mut, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList,
    FunctionArguments, GroupByExpr, Ident, ObjectName, Select, Spanned, TableFactor,
};

use super::expr::{plain_args, unsupported};
use super::lex::PARTITION_BY;
use super::SqlError;

const KINDS: [&str; 3] = ["TUMBLE", "HOP", "SESSION"];

/// The window auxiliary function `name` reads, if it is one (`TUMBLE_START` -> `window_start`).
fn auxiliary(name: &str) -> Option<&'static str> {
    let (kind, part) = name.split_once('_')?;
    if !KINDS.contains(&kind) {
        return None;
    }
    match part {
        "START" => Some("window_start"),
        "END" => Some("window_end"),
        "ROWTIME" => Some("window_time"),
        _ => None,
    }
}

fn upper_name(f: &Function) -> String {
    f.name.to_string().to_ascii_uppercase()
}

/// `f` renamed `name` with arguments `args`, keeping its span.
fn call(f: &Function, name: &str, args: Vec<Expr>) -> Function {
    let mut out = f.clone();
    out.name = ObjectName::from(vec![Ident::with_span(f.name.span(), name)]);
    out.args = FunctionArguments::List(FunctionArgumentList {
        duplicate_treatment: None,
        args: args
            .into_iter()
            .map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e)))
            .collect(),
        clauses: Vec::new(),
    });
    out
}

/// A column reference's column: `rt` or `B.rt`.
fn column(e: &Expr) -> Option<Ident> {
    match e {
        Expr::Identifier(i) => Some(i.clone()),
        Expr::CompoundIdentifier(p) => p.last().cloned(),
        _ => None,
    }
}

/// `sel` in the window table function's form, if it groups by a legacy group window.
pub(super) fn rewrite(sel: &Select) -> Result<Option<Select>, SqlError> {
    let GroupByExpr::Expressions(keys, modifiers) = &sel.group_by else {
        return Ok(None);
    };
    let windows: Vec<(usize, &Function)> = keys
        .iter()
        .enumerate()
        .filter_map(|(i, k)| match k {
            Expr::Function(f) if KINDS.contains(&upper_name(f).as_str()) => Some((i, f)),
            _ => None,
        })
        .collect();
    let (at, win) = match windows.as_slice() {
        [] => return Ok(None),
        [one] => *one,
        [_, (_, second), ..] => {
            return Err(unsupported(
                *second,
                "a second group window in one GROUP BY is",
            ))
        }
    };
    let kind = upper_name(win);
    let win_expr = Expr::Function(win.clone());
    let args = plain_args(win, &win_expr)?;
    let time = args.first().and_then(|a| column(a)).ok_or_else(|| {
        SqlError::span(
            win_expr.span(),
            format!("expected {kind}(time_attribute, INTERVAL ...)"),
        )
    })?;
    let ([from], true) = (
        sel.from.as_slice(),
        sel.from.iter().all(|f| f.joins.is_empty()),
    ) else {
        return Err(unsupported(
            &win_expr,
            "a group window over anything but one table is",
        ));
    };
    let TableFactor::Table {
        name,
        alias,
        args: None,
        version: None,
        ..
    } = &from.relation
    else {
        return Err(unsupported(
            &from.relation,
            "a group window over this FROM clause is",
        ));
    };
    let others: Vec<&Expr> = keys
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at)
        .map(|(_, k)| k)
        .collect();
    let table = Ident::with_span(name.span(), super::last_name(name));
    let mut tvf_args = vec![Expr::Identifier(table)];
    if kind == "SESSION" && !others.is_empty() {
        let by = others
            .iter()
            .map(|k| {
                column(k).map(Expr::Identifier).ok_or_else(|| {
                    unsupported(
                        *k,
                        "a session window grouped by an expression other than a column is",
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        tvf_args.push(Expr::Function(call(win, PARTITION_BY, by)));
    }
    tvf_args.push(Expr::Function(call(
        win,
        "DESCRIPTOR",
        vec![Expr::Identifier(time)],
    )));
    tvf_args.extend(args[1..].iter().map(|a| (*a).clone()));
    let mut out = sel.clone();
    out.from[0].relation = TableFactor::TableFunction {
        expr: Expr::Function(call(win, &kind, tvf_args)),
        alias: alias.clone(),
    };
    let span = win_expr.span();
    let mut grouped: Vec<Expr> = others.into_iter().cloned().collect();
    grouped.push(Expr::Identifier(Ident::with_span(span, "window_start")));
    grouped.push(Expr::Identifier(Ident::with_span(span, "window_end")));
    out.group_by = GroupByExpr::Expressions(grouped, modifiers.clone());
    let mut failed = None;
    let _ = visit_expressions_mut(&mut out, |e| {
        if let Expr::Function(f) = e {
            if let Some(col) = auxiliary(&upper_name(f)) {
                *e = Expr::Identifier(Ident::with_span(f.name.span(), col));
            } else if upper_name(f).ends_with("_PROCTIME") {
                failed.get_or_insert_with(|| {
                    unsupported(&*f, "a processing-time window attribute is")
                });
            }
        }
        ControlFlow::<()>::Continue(())
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(Some(out)),
    }
}
