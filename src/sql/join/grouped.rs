//! A GROUP BY (or aggregates) over a join in one `SELECT`, as q4 writes it:
//! `SELECT MAX(B.price), A.category FROM auction A, bid B WHERE ... GROUP BY A.id, A.category`.
//! The joined row's columns are written flat by a select, each under a name of its own
//! (`A__category`: both sides may have an `id`), and the query's column references are rewritten
//! to those names, so the group aggregate reads one plain stream as it does for any table.

use std::ops::ControlFlow;

use sqlparser::ast::{visit_expressions_mut, Expr, GroupByExpr, Ident, Select, SelectItem};

use super::super::expr::is_plain_name;
use super::super::query::Item;
use super::super::{Col, Compiler, SqlError, Stream};
use super::Side;

impl Compiler {
    /// The group aggregate of `sel` over `joined` (the join's output after its filters), whose
    /// columns are those of `sides` in order.
    pub(super) fn group_join(
        &mut self,
        sel: &Select,
        sides: &[Side],
        joined: Stream,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let names: Vec<Vec<String>> = sides
            .iter()
            .enumerate()
            .map(|(i, s)| {
                s.stream
                    .columns
                    .iter()
                    .map(|c| flat_name(i, &s.alias, &c.name))
                    .collect()
            })
            .collect();
        let mut fields = Vec::new();
        let mut columns = Vec::new();
        for (s, names) in sides.iter().zip(&names) {
            for (c, n) in s.stream.columns.iter().zip(names) {
                fields.push((n.clone(), c.expr.clone()));
                columns.push(Col {
                    name: n.clone(),
                    ty: c.ty.clone(),
                    expr: n.clone(),
                });
            }
        }
        let name = format!("{base}_flat");
        self.push_transform(&name, super::super::parts::select(&joined.name, fields));
        let flat = Stream {
            name,
            columns,
            ..joined
        };
        let mut sel = sel.clone();
        // The join took WHERE already (as its conditions, or a filter after it).
        sel.selection = None;
        let rename = |e: &mut Expr| {
            if let Some(r) = renamed(e, sides, &names) {
                *e = r;
            }
            ControlFlow::<()>::Continue(())
        };
        for item in &mut sel.projection {
            if let SelectItem::UnnamedExpr(e) = item {
                // `SELECT A.category` still names its column `category`.
                if let Some(alias) = column_name(e) {
                    *item = SelectItem::ExprWithAlias {
                        expr: e.clone(),
                        alias,
                    };
                }
            }
        }
        let _ = visit_expressions_mut(&mut sel.projection, rename);
        let _ = visit_expressions_mut(&mut sel.having, rename);
        if let GroupByExpr::Expressions(exprs, _) = &mut sel.group_by {
            let _ = visit_expressions_mut(exprs, rename);
        }
        // A refusal names a column as the query wrote it, not by its flat name.
        self.grouped(&sel, flat, base).map_err(|mut e| {
            for (s, names) in sides.iter().zip(&names) {
                for (c, n) in s.stream.columns.iter().zip(names) {
                    let written = format!("`{}.{}`", s.alias, c.name);
                    e.message = e.message.replace(&format!("`{n}`"), &written);
                }
            }
            e
        })
    }
}

/// The flat column of side `i`'s column `col`: `alias__col` where that is a plain name.
fn flat_name(i: usize, alias: &str, col: &str) -> String {
    let n = format!("{alias}__{col}");
    if is_plain_name(&n) {
        n
    } else {
        format!("_s{i}_{col}")
    }
}

/// The name a column reference gives its output column (its last part).
fn column_name(e: &Expr) -> Option<Ident> {
    match e {
        Expr::Identifier(i) => Some(i.clone()),
        Expr::CompoundIdentifier(p) => p.last().cloned(),
        _ => None,
    }
}

/// A column reference of the join (`alias.col[.field..]`, or `col[.field..]` where one side has
/// `col`) as a reference to its flat column; `None` for anything else, which the translation then
/// reports.
fn renamed(e: &Expr, sides: &[Side], names: &[Vec<String>]) -> Option<Expr> {
    let parts: &[Ident] = match e {
        Expr::Identifier(i) => std::slice::from_ref(i),
        Expr::CompoundIdentifier(p) => p,
        _ => return None,
    };
    let col = |s: usize, name: &Ident| {
        sides[s]
            .stream
            .columns
            .iter()
            .position(|c| c.name == name.value)
    };
    let by_alias = match parts {
        [alias, name, ..] => sides
            .iter()
            .position(|s| s.alias == alias.value)
            .and_then(|s| Some((s, col(s, name)?, &parts[2..]))),
        _ => None,
    };
    let (s, c, rest) = match by_alias {
        Some(found) => found,
        None => {
            let mut found = (0..sides.len()).filter_map(|s| Some((s, col(s, &parts[0])?)));
            let (s, c) = found.next()?;
            if found.next().is_some() {
                return None;
            }
            (s, c, &parts[1..])
        }
    };
    // Where the reference was written, so a refusal points there.
    let head = Ident::with_span(parts[0].span, &names[s][c]);
    Some(if rest.is_empty() {
        Expr::Identifier(head)
    } else {
        Expr::CompoundIdentifier(std::iter::once(head).chain(rest.iter().cloned()).collect())
    })
}
