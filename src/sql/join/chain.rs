//! A chain of joins in one `FROM` (`a JOIN b ON .. LEFT JOIN c ON ..`), joined left to right as
//! SQL defines it: the first two relations become a query of their own whose columns are every
//! column of both, each under a name of its own (`a__col`: both may have an `id`), registered as a
//! view; the rest of the query then reads that view in their place, its references to `a.col`
//! and `b.col` rewritten to the view's columns, and joins it with the next relation, and so on.
//! Each join is then whatever kind its own conditions make it (regular, interval, temporal).

use std::ops::ControlFlow;

use sqlparser::ast::{
    visit_expressions_mut, Expr, GroupByExpr, Ident, JoinConstraint, JoinOperator, ObjectName,
    Query, Select, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, TableAlias, TableFactor,
    TableWithJoins,
};

use super::super::expr::{is_plain_name, unsupported};
use super::super::query::Item;
use super::super::{Compiler, SqlError, Stream};

/// A relation of the chain as the query names it, and its columns.
struct Named {
    alias: String,
    columns: Vec<String>,
}

impl Named {
    fn flat(&self, col: &str) -> String {
        let n = format!("{}__{col}", self.alias);
        if is_plain_name(&n) {
            n
        } else {
            format!("_{}_{col}", self.alias.len())
        }
    }
}

impl Compiler {
    /// `SELECT .. FROM a JOIN b ON .. JOIN c ON .. ..`: `a` and `b` joined in a view read in their
    /// place.
    pub(super) fn chained(
        &mut self,
        sel: &Select,
        from: &TableWithJoins,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let level = from.joins.len();
        let mut first = from.relation.clone();
        let mut second = from.joins[0].clone();
        let named = [
            self.named(&mut first, &format!("{base}_c{level}l"))?,
            self.named(&mut second.relation, &format!("{base}_c{level}r"))?,
        ];
        // The first join on its own: every column of both sides under its flat name.
        let mut inner = sel.clone();
        inner.projection = (named.iter())
            .flat_map(|n| {
                n.columns.iter().map(|c| SelectItem::ExprWithAlias {
                    expr: Expr::CompoundIdentifier(vec![Ident::new(&n.alias), Ident::new(c)]),
                    alias: Ident::new(n.flat(c)),
                })
            })
            .collect();
        inner.from = vec![TableWithJoins {
            relation: first,
            joins: vec![second],
        }];
        inner.selection = None;
        inner.group_by = GroupByExpr::Expressions(Vec::new(), Vec::new());
        inner.having = None;
        inner.named_window = Vec::new();
        let view = format!("{base}_c{level}");
        let query = Query {
            with: None,
            body: Box::new(SetExpr::Select(Box::new(inner))),
            order_by: None,
            limit_clause: None,
            fetch: None,
            locks: Vec::new(),
            for_clause: None,
            settings: None,
            format_clause: None,
            pipe_operators: Vec::new(),
        };
        let stream = self.query(&query, &view, None)?;
        self.views.insert(view.clone(), stream);
        // The rest of the query over the view, `_cN` in the first two relations' place.
        let alias = format!("_c{level}");
        let mut outer = sel.clone();
        outer.from = vec![TableWithJoins {
            relation: table(&view, &alias),
            joins: from.joins[1..].to_vec(),
        }];
        let rest: Vec<String> = from.joins[1..]
            .iter()
            .filter_map(|j| alias_of(&j.relation))
            .collect();
        outer.projection = expand_wildcards(&outer.projection, &named, &alias, &rest);
        let rewrite = |e: &mut Expr| {
            if let Some(r) = rewritten(e, &named, &alias) {
                *e = r;
            }
            ControlFlow::<()>::Continue(())
        };
        let _ = visit_expressions_mut(&mut outer.projection, rewrite);
        let _ = visit_expressions_mut(&mut outer.selection, rewrite);
        let _ = visit_expressions_mut(&mut outer.having, rewrite);
        if let GroupByExpr::Expressions(exprs, _) = &mut outer.group_by {
            let _ = visit_expressions_mut(exprs, rewrite);
        }
        for j in &mut outer.from[0].joins {
            if let Some(on) = on_mut(&mut j.join_operator) {
                let _ = visit_expressions_mut(on, rewrite);
            }
        }
        let list = outer.from.clone();
        // A refusal names the relations and columns as the query wrote them.
        self.joined(&outer, &list, base).map_err(|mut e| {
            for n in &named {
                for c in &n.columns {
                    let flat = format!("{alias}.{}", n.flat(c));
                    e.message = e.message.replace(&flat, &format!("{}.{c}", n.alias));
                }
            }
            let both = format!("{}, {}", named[0].alias, named[1].alias);
            e.message = e
                .message
                .replace(&format!("({alias}, "), &format!("({both}, "));
            e
        })
    }

    /// The alias and columns of a relation of the chain; a subquery is compiled into a view
    /// named `view` first (and the relation made a reference to it), so it is compiled once.
    fn named(&mut self, tf: &mut TableFactor, view: &str) -> Result<Named, SqlError> {
        if let TableFactor::Derived {
            subquery,
            alias: Some(a),
            ..
        } = tf
        {
            let stream = self.query(subquery, view, None)?;
            let alias = a.name.value.clone();
            self.views.insert(view.to_string(), stream);
            *tf = table(view, &alias);
        }
        let TableFactor::Table { name, alias, .. } = tf else {
            return Err(unsupported(tf, "this input of a chain of joins is"));
        };
        let table = super::super::last_name(name);
        let columns = match (self.views.get(&table), self.tables.get(&table)) {
            (Some(v), _) => v.columns.iter().map(|c| c.name.clone()).collect(),
            (None, Some(t)) => t.columns.iter().map(|c| c.name.clone()).collect(),
            (None, None) => {
                return Err(SqlError::span(
                    name.0
                        .first()
                        .map_or(sqlparser::tokenizer::Span::empty(), |p| {
                            sqlparser::ast::Spanned::span(p)
                        }),
                    format!("no table or view `{table}`"),
                ))
            }
        };
        Ok(Named {
            alias: alias.as_ref().map_or(table, |a| a.name.value.clone()),
            columns,
        })
    }
}

/// A reference to the table or view `name`, called `alias` in the query.
fn table(name: &str, alias: &str) -> TableFactor {
    TableFactor::Table {
        name: ObjectName::from(vec![Ident::new(name)]),
        alias: Some(TableAlias {
            explicit: true,
            name: Ident::new(alias),
            columns: Vec::new(),
            at: None,
        }),
        args: None,
        with_hints: Vec::new(),
        version: None,
        with_ordinality: false,
        partitions: Vec::new(),
        json_path: None,
        sample: None,
        index_directives: Vec::new(),
        inheritance: None,
    }
}

fn alias_of(tf: &TableFactor) -> Option<String> {
    match tf {
        TableFactor::Table { name, alias, .. } => Some(
            alias
                .as_ref()
                .map_or_else(|| super::super::last_name(name), |a| a.name.value.clone()),
        ),
        TableFactor::Derived { alias, .. } => alias.as_ref().map(|a| a.name.value.clone()),
        _ => None,
    }
}

fn on_mut(op: &mut JoinOperator) -> Option<&mut Expr> {
    match op {
        JoinOperator::Join(c)
        | JoinOperator::Inner(c)
        | JoinOperator::Left(c)
        | JoinOperator::LeftOuter(c)
        | JoinOperator::Right(c)
        | JoinOperator::RightOuter(c)
        | JoinOperator::FullOuter(c) => match c {
            JoinConstraint::On(e) => Some(e),
            _ => None,
        },
        _ => None,
    }
}

/// `*` and `a.*`/`b.*` of the first two relations as their columns, read from the view.
fn expand_wildcards(
    items: &[SelectItem],
    named: &[Named],
    view: &str,
    rest: &[String],
) -> Vec<SelectItem> {
    let columns = |n: &Named| -> Vec<SelectItem> {
        n.columns
            .iter()
            .map(|c| SelectItem::ExprWithAlias {
                expr: Expr::CompoundIdentifier(vec![Ident::new(view), Ident::new(n.flat(c))]),
                alias: Ident::new(c),
            })
            .collect()
    };
    let mut out = Vec::new();
    for item in items {
        match item {
            SelectItem::Wildcard(_) => {
                named.iter().for_each(|n| out.extend(columns(n)));
                out.extend(rest.iter().map(|r| {
                    SelectItem::QualifiedWildcard(
                        SelectItemQualifiedWildcardKind::ObjectName(ObjectName::from(vec![
                            Ident::new(r),
                        ])),
                        Default::default(),
                    )
                }));
            }
            SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(o), _)
                if named.iter().any(|n| n.alias == super::super::last_name(o)) =>
            {
                let a = super::super::last_name(o);
                named
                    .iter()
                    .filter(|n| n.alias == a)
                    .for_each(|n| out.extend(columns(n)));
            }
            other => out.push(other.clone()),
        }
    }
    out
}

/// `a.col[.field..]` (or `col` where only one of the two has it) as the view's column.
fn rewritten(e: &Expr, named: &[Named], view: &str) -> Option<Expr> {
    let parts: &[Ident] = match e {
        Expr::Identifier(i) => std::slice::from_ref(i),
        Expr::CompoundIdentifier(p) => p,
        _ => return None,
    };
    let has = |n: &Named, c: &Ident| n.columns.contains(&c.value);
    let (n, rest) = match parts {
        [alias, col, rest @ ..] if named.iter().any(|n| n.alias == alias.value && has(n, col)) => {
            let n = named.iter().find(|n| n.alias == alias.value)?;
            (n, (col, rest))
        }
        [col, rest @ ..] => {
            let mut found = named.iter().filter(|n| has(n, col));
            let n = found.next()?;
            if found.next().is_some() {
                return None;
            }
            (n, (col, rest))
        }
        [] => return None,
    };
    let (col, rest) = rest;
    let head = [
        Ident::with_span(parts[0].span, view),
        Ident::with_span(col.span, n.flat(&col.value)),
    ];
    Some(Expr::CompoundIdentifier(
        head.into_iter().chain(rest.iter().cloned()).collect(),
    ))
}
