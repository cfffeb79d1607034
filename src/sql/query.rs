//! One `SELECT` to transforms: a filter for `WHERE`, a window for a window table function's
//! `GROUP BY window_start, window_end, ...`, a filter for `HAVING`, and a select that writes the
//! output columns (named as the sink table or the view says, timestamps as Flink's JSON format
//! writes them).

use sqlparser::ast::{
    Expr, Function, GroupByExpr, Ident, Query, Select, SelectItem, SelectItemQualifiedWildcardKind,
    SetExpr, Spanned, TableFactor,
};

use super::expr::{is_plain_name, translate, unsupported, Scope};
use super::{Col, Compiler, SqlError, SqlType, Stream};

/// An output column before it is named: its expression text and type.
pub(super) struct Item {
    pub(super) name: String,
    pub(super) expr: String,
    pub(super) ty: SqlType,
}

impl Compiler {
    /// Compiles `q` into transforms named from `base`; `sink`: the columns of the table it is
    /// inserted into (matched by position), else it is a view and keeps its own column names.
    pub(super) fn query(
        &mut self,
        q: &Query,
        base: &str,
        sink: Option<&[Col]>,
    ) -> Result<Stream, SqlError> {
        if q.order_by.is_some() || q.limit_clause.is_some() || q.fetch.is_some() || q.with.is_some()
        {
            return Err(unsupported(q, "ORDER BY, LIMIT and WITH on a stream are"));
        }
        let SetExpr::Select(sel) = q.body.as_ref() else {
            return Err(unsupported(
                q.body.as_ref(),
                "UNION, VALUES and other set operations are",
            ));
        };
        // A legacy group window (`GROUP BY TUMBLE(rt, ..)`) is compiled in its table function form.
        let rewritten = super::group_window::rewrite(sel)?;
        let sel: &Select = rewritten.as_ref().unwrap_or(sel);
        let named_ok = super::over::has_over(sel);
        if sel.distinct.is_some()
            || (!named_ok && !sel.named_window.is_empty())
            || sel.qualify.is_some()
        {
            return Err(unsupported(
                sel,
                "DISTINCT, WINDOW (other than for OVER aggregates) and QUALIFY are",
            ));
        }
        let from = match sel.from.as_slice() {
            [from] if from.joins.is_empty() => from,
            [] => return Err(SqlError::span(
                sel.select_token.0.span,
                "a query reads a table, a view, a join or a window table function: FROM is missing",
            )),
            list => {
                let (input, items) = self.joined(sel, list, base)?;
                return self.output(sel, input, items, base, sink);
            }
        };
        let (input, items) = match &from.relation {
            TableFactor::TableFunction {
                expr: Expr::Function(f),
                ..
            } => self.windowed(sel, f, base)?,
            TableFactor::Table {
                name,
                args: None,
                version: None,
                ..
            } => {
                let input = self.stream_of(&super::last_name(name), from.relation.span())?;
                self.plain(sel, input, base)?
            }
            TableFactor::Derived { subquery, .. }
                if super::dedupe::row_number(subquery).is_some() =>
            {
                self.deduped(sel, subquery, base)?
            }
            TableFactor::Derived { subquery, .. } => {
                let inner = self.query(subquery, &format!("{base}_from"), None)?;
                self.plain(sel, inner, base)?
            }
            other => return Err(unsupported(other, "this FROM clause is")),
        };
        self.output(sel, input, items, base, sink)
    }

    /// `SELECT ... FROM stream [WHERE ...]`.
    fn plain(
        &mut self,
        sel: &Select,
        input: Stream,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        if super::over::has_over(sel) {
            return self.over(sel, input, base);
        }
        if groups(sel) || super::group::has_aggregates(sel, &input) {
            return self.grouped(sel, input, base);
        }
        let input = self.filter(sel.selection.as_ref(), input, &format!("{base}_where"))?;
        let mut scope = ColumnScope { input: &input };
        let items = items(sel, &input, &mut scope)?;
        Ok((input, items))
    }

    pub(super) fn filter(
        &mut self,
        cond: Option<&Expr>,
        input: Stream,
        name: &str,
    ) -> Result<Stream, SqlError> {
        let Some(cond) = cond else {
            return Ok(input);
        };
        let (text, _) = translate(cond, &mut ColumnScope { input: &input })?;
        self.push_filter(name, &input.name, &text);
        Ok(Stream {
            name: name.to_string(),
            ..input
        })
    }

    /// Adds the filter transform `name` reading `input`, keeping what `cond` holds for.
    pub(super) fn push_filter(&mut self, name: &str, input: &str, cond: &str) {
        self.push_transform(name, super::parts::filter(input, cond.to_string()));
    }

    /// A filter for the `AND` of `conds` (none: the input unchanged).
    pub(super) fn filter_all(
        &mut self,
        conds: &[&Expr],
        input: Stream,
        name: &str,
    ) -> Result<Stream, SqlError> {
        if conds.is_empty() {
            return Ok(input);
        }
        let text = and_of(conds, &mut ColumnScope { input: &input })?;
        self.push_filter(name, &input.name, &text);
        Ok(Stream {
            name: name.to_string(),
            ..input
        })
    }

    /// The final select: output columns named by the sink (by position) or by the query.
    fn output(
        &mut self,
        sel: &Select,
        input: Stream,
        items: Vec<Item>,
        base: &str,
        sink: Option<&[Col]>,
    ) -> Result<Stream, SqlError> {
        let named: Vec<(String, String, SqlType)> = match sink {
            Some(cols) => {
                if cols.len() != items.len() {
                    return Err(SqlError::span(
                        sel.select_token.0.span,
                        format!(
                            "the query gives {} columns but the sink table has {} ({})",
                            items.len(),
                            cols.len(),
                            cols.iter()
                                .map(|c| c.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
                cols.iter()
                    .zip(items)
                    .map(|(c, i)| (c.name.clone(), formatted(&i, &c.ty), c.ty.clone()))
                    .collect()
            }
            None => items.into_iter().map(|i| (i.name, i.expr, i.ty)).collect(),
        };
        let mut seen = std::collections::BTreeSet::new();
        for (name, _, _) in &named {
            if !seen.insert(name.as_str()) {
                return Err(SqlError::span(
                    sel.select_token.0.span,
                    format!("two output columns are named `{name}`: give one an alias with AS"),
                ));
            }
        }
        // A view or subquery that only keeps some of its input's fields under their own names
        // is no transform: the next stage reads them where they are, and no stage re-writes
        // every record (Nexmark's `bid` view over its table).
        if sink.is_none() && named.iter().all(|(n, e, _)| n == e && is_plain_name(e)) {
            let time = input.time.and_then(|i| {
                let te = &input.columns[i].expr;
                named
                    .iter()
                    .position(|(_, e, ty)| e == te && ty.is_time())
                    .or_else(|| named.iter().position(|(_, e, _)| e == te))
            });
            let columns = named
                .into_iter()
                .map(|(name, expr, ty)| Col { name, expr, ty })
                .collect();
            return Ok(Stream {
                name: input.name,
                columns,
                time,
                window: input.window,
                updating: input.updating,
            });
        }
        let fields: Vec<(String, String)> = named
            .iter()
            .map(|(n, e, _)| (n.clone(), e.clone()))
            .collect();
        self.push_transform(base, super::parts::select(&input.name, fields));
        // The record keeps its event time through a select; the stream keeps a time attribute
        // only under the name of an output column that passes it through unchanged.
        let time_expr = input.time.map(|i| input.columns[i].expr.clone());
        // A column of the time's type first: `SELECT *` passes both `ts` and `rt AS ts` through.
        let time = time_expr.and_then(|te| {
            let same = |(_, e, _): &&(String, String, SqlType)| *e == te;
            named
                .iter()
                .position(|n| same(&n) && n.2.is_time())
                .or_else(|| named.iter().position(|n| same(&n)))
        });
        let columns = named
            .into_iter()
            .map(|(name, _, ty)| Col {
                expr: name.clone(),
                name,
                ty,
            })
            .collect();
        Ok(Stream {
            name: base.to_string(),
            columns,
            time,
            window: input.window,
            updating: input.updating,
        })
    }
}

/// The `AND` of `conds`, each translated in `scope`.
pub(super) fn and_of(conds: &[&Expr], scope: &mut dyn Scope) -> Result<String, SqlError> {
    let mut texts = Vec::with_capacity(conds.len());
    for c in conds {
        texts.push(format!("({})", translate(c, scope)?.0));
    }
    Ok(texts.join(" && "))
}

/// Whether `sel` has a GROUP BY or a HAVING.
pub(super) fn groups(sel: &Select) -> bool {
    !matches!(&sel.group_by, GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty())
        || sel.having.is_some()
}

/// A value written into a column of type `ty`: timestamps held as epoch milliseconds become
/// Flink's JSON text for them.
fn formatted(item: &Item, ty: &SqlType) -> String {
    match (ty, item.ty.is_time()) {
        (SqlType::Timestamp, true) => format!("sql_timestamp({})", item.expr),
        (SqlType::TimestampLtz, true) => format!("concat(sql_timestamp({}), \"Z\")", item.expr),
        _ => item.expr.clone(),
    }
}

pub(super) fn items(
    sel: &Select,
    input: &Stream,
    scope: &mut dyn Scope,
) -> Result<Vec<Item>, SqlError> {
    let mut out = Vec::new();
    for (i, item) in sel.projection.iter().enumerate() {
        match item {
            SelectItem::Wildcard(_) => {
                for c in &input.columns {
                    let e = Expr::Identifier(Ident::new(c.name.clone()));
                    let (expr, ty) = translate(&e, scope)?;
                    out.push(Item {
                        name: c.name.clone(),
                        expr,
                        ty,
                    });
                }
            }
            SelectItem::UnnamedExpr(e) => {
                let (expr, ty) = translate(e, scope)?;
                let name = match e {
                    Expr::Identifier(id) => id.value.clone(),
                    Expr::CompoundIdentifier(parts) => {
                        parts.last().map_or(String::new(), |p| p.value.clone())
                    }
                    _ => format!("EXPR${i}"),
                };
                out.push(Item { name, expr, ty });
            }
            SelectItem::ExprWithAlias { expr: e, alias } => {
                let (expr, ty) = translate(e, scope)?;
                out.push(Item {
                    name: alias.value.clone(),
                    expr,
                    ty,
                });
            }
            SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(n), _) => {
                let alias = super::last_name(n);
                let Some(columns) = scope.qualified(&alias) else {
                    return Err(SqlError::span(
                        item.span(),
                        format!("no join side named `{alias}`"),
                    ));
                };
                for c in columns {
                    let e = Expr::CompoundIdentifier(vec![Ident::new(&alias), Ident::new(&c)]);
                    let (expr, ty) = translate(&e, scope)?;
                    out.push(Item { name: c, expr, ty });
                }
            }
            other => return Err(unsupported(other, "this select item is")),
        }
    }
    Ok(out)
}

/// Names in a query over a stream: its columns, by name or `alias.name`; `name.field` reads a
/// nested field of a ROW column.
pub(super) struct ColumnScope<'s> {
    input: &'s Stream,
}

impl<'s> ColumnScope<'s> {
    pub(super) fn new(input: &'s Stream) -> Self {
        ColumnScope { input }
    }
}

pub(super) fn resolve(
    input: &Stream,
    parts: &[Ident],
    e: &Expr,
) -> Result<(String, SqlType), SqlError> {
    let find = |name: &str| input.columns.iter().find(|c| c.name == name);
    let (col, rest) = match parts {
        [one] => (find(&one.value), &parts[1..]),
        [first, second, ..] => match find(&first.value) {
            Some(c) => (Some(c), &parts[1..]),
            None => (find(&second.value), &parts[2..]),
        },
        [] => (None, parts),
    };
    let Some(col) = col else {
        let names: Vec<&str> = input.columns.iter().map(|c| c.name.as_str()).collect();
        return Err(SqlError::span(
            e.span(),
            format!(
                "no column `{}` (the columns are: {})",
                parts
                    .iter()
                    .map(|p| p.value.as_str())
                    .collect::<Vec<_>>()
                    .join("."),
                names.join(", ")
            ),
        ));
    };
    let mut text = col.expr.clone();
    for p in rest {
        if !is_plain_name(&p.value) {
            return Err(SqlError::span(
                p.span,
                format!("field name `{}` is not supported in a path", p.value),
            ));
        }
        text = format!("{text}.{}", p.value);
    }
    if !rest.is_empty() {
        return Ok((text, SqlType::Other(String::new())));
    }
    if !is_plain_name(&col.name) && col.expr == col.name {
        return Err(SqlError::span(
            e.span(),
            format!(
                "column name `{}` is not supported yet (letters, digits and _ only)",
                col.name
            ),
        ));
    }
    Ok((text, col.ty.clone()))
}

impl Scope for ColumnScope<'_> {
    fn column(&mut self, parts: &[Ident], e: &Expr) -> Result<(String, SqlType), SqlError> {
        resolve(self.input, parts, e)
    }
    fn aggregate(
        &mut self,
        _f: &Function,
        _e: &Expr,
    ) -> Result<Option<(String, SqlType)>, SqlError> {
        Ok(None)
    }
}
