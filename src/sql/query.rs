//! One `SELECT` to transforms: a filter for `WHERE`, a window for a window table function's
//! `GROUP BY window_start, window_end, ...`, a filter for `HAVING`, and a select that writes the
//! output columns (named as the sink table or the view says, timestamps as Flink's JSON format
//! writes them).

use sqlparser::ast::{
    Expr, Function, GroupByExpr, Ident, Query, Select, SelectItem, SetExpr, Spanned, TableFactor,
};

use super::connectors::interval_ms;
use super::expr::{is_plain_name, plain_args, quote, translate, unsupported, Scope};
use super::{Col, Compiler, SqlError, SqlType, Stream};

/// An output column before it is named: its expression text and type.
struct Item {
    name: String,
    expr: String,
    ty: SqlType,
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
        if sel.distinct.is_some() || !sel.named_window.is_empty() || sel.qualify.is_some() {
            return Err(unsupported(
                sel.as_ref(),
                "DISTINCT, WINDOW and QUALIFY are",
            ));
        }
        let [from] = sel.from.as_slice() else {
            return Err(SqlError::span(sel.select_token.0.span, "a query reads exactly one table, view or window table function (joins are not supported yet)"));
        };
        if !from.joins.is_empty() {
            return Err(unsupported(&from.joins[0], "joins are"));
        }
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
        if !matches!(&sel.group_by, GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty())
            || sel.having.is_some()
        {
            return Err(SqlError::span(sel.select_token.0.span, "GROUP BY needs a window table function (FROM TABLE(TUMBLE(...))): a GROUP BY over a whole stream is an updating result, which sluice does not produce yet"));
        }
        let input = self.filter(sel.selection.as_ref(), input, &format!("{base}_where"))?;
        let mut scope = ColumnScope { input: &input };
        let items = items(sel, &input, &mut scope)?;
        Ok((input, items))
    }

    fn filter(
        &mut self,
        cond: Option<&Expr>,
        input: Stream,
        name: &str,
    ) -> Result<Stream, SqlError> {
        let Some(cond) = cond else {
            return Ok(input);
        };
        let (text, _) = translate(cond, &mut ColumnScope { input: &input })?;
        self.transforms.push(format!(
            "[transforms.{}]\ntype = \"filter\"\ninputs = [{}]\nwhere = {}\n\n",
            quote(name),
            quote(&input.name),
            quote(&text)
        ));
        Ok(Stream {
            name: name.to_string(),
            ..input
        })
    }

    /// `SELECT ... FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(rt), size)) GROUP BY window_start, window_end, ...`.
    fn windowed(
        &mut self,
        sel: &Select,
        tvf: &Function,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let call = Expr::Function(tvf.clone());
        let kind = tvf.name.to_string().to_ascii_uppercase();
        let args = plain_args(tvf, &call)?;
        let (Some(Expr::Identifier(table)), Some(Expr::Function(desc))) =
            (args.first().copied(), args.get(1).copied())
        else {
            return Err(SqlError::span(
                call.span(),
                format!("expected {kind}(TABLE name, DESCRIPTOR(time_column), ...)"),
            ));
        };
        let input = self.stream_of(&table.value, table.span)?;
        let desc_expr = Expr::Function(desc.clone());
        let time_col = match plain_args(desc, &desc_expr)?.as_slice() {
            [Expr::Identifier(c)] if desc.name.to_string().eq_ignore_ascii_case("DESCRIPTOR") => {
                c.clone()
            }
            _ => {
                return Err(SqlError::span(
                    desc_expr.span(),
                    "expected DESCRIPTOR(time_column)",
                ))
            }
        };
        if input.time.as_deref() != Some(time_col.value.as_str()) {
            return Err(SqlError::span(
                time_col.span,
                format!(
                    "`{}` is not the time attribute of `{}` (its WATERMARK column{})",
                    time_col.value,
                    table.value,
                    input
                        .time
                        .as_ref()
                        .map_or(String::new(), |t| format!(" is `{t}`"))
                ),
            ));
        }
        let sizes = args[2..]
            .iter()
            .map(|a| interval_ms(a))
            .collect::<Result<Vec<_>, _>>()?;
        let window = match (kind.as_str(), sizes.as_slice()) {
            ("TUMBLE", [size]) => format!("{{ type = \"tumbling\", size = \"{size}ms\" }}"),
            ("HOP", [slide, size]) => {
                format!("{{ type = \"sliding\", size = \"{size}ms\", slide = \"{slide}ms\" }}")
            }
            ("CUMULATE", [step, max]) => {
                format!("{{ type = \"cumulative\", step = \"{step}ms\", max_size = \"{max}ms\" }}")
            }
            ("TUMBLE" | "HOP" | "CUMULATE", _) => {
                return Err(SqlError::span(
                    call.span(),
                    format!(
                        "{kind} takes TABLE, DESCRIPTOR and {} interval(s)",
                        if kind == "TUMBLE" { 1 } else { 2 }
                    ),
                ))
            }
            _ => {
                return Err(unsupported(
                    &call,
                    &format!("the window function {kind} is"),
                ))
            }
        };
        let input = self.filter(sel.selection.as_ref(), input, &format!("{base}_where"))?;
        let keys = group_keys(sel, &input)?;
        let mut scope = WindowScope {
            input: &input,
            keys: &keys,
            aggregates: Vec::new(),
        };
        let items = items(sel, &input, &mut scope)?;
        let having = match &sel.having {
            Some(h) => Some(translate(h, &mut scope)?.0),
            None => None,
        };
        let aggregates = scope.aggregates;
        let window_name = format!("{base}_window");
        let aggs: Vec<String> = aggregates
            .iter()
            .map(|(n, a, _)| format!("{n} = {}", quote(a)))
            .collect();
        let group_by: Vec<String> = keys.iter().map(|k| quote(&k.expr)).collect();
        self.transforms.push(format!(
            "[transforms.{}]\ntype = \"window\"\ninputs = [{}]\ngroup_by = [{}]\nwindow = {window}\nallowed_lateness = \"0s\"\naggregates = {{ {} }}\n\n",
            quote(&window_name),
            quote(&input.name),
            group_by.join(", "),
            aggs.join(", ")
        ));
        let mut columns: Vec<Col> = keys
            .iter()
            .map(|k| Col {
                expr: k.expr.clone(),
                ..k.clone()
            })
            .collect();
        columns.push(Col {
            name: "window_start".into(),
            ty: SqlType::Timestamp,
            expr: "window_start".into(),
        });
        columns.push(Col {
            name: "window_end".into(),
            ty: SqlType::Timestamp,
            expr: "window_end".into(),
        });
        let mut out = Stream {
            name: window_name,
            columns,
            time: None,
        };
        if let Some(h) = having {
            let name = format!("{base}_having");
            self.transforms.push(format!(
                "[transforms.{}]\ntype = \"filter\"\ninputs = [{}]\nwhere = {}\n\n",
                quote(&name),
                quote(&out.name),
                quote(&h)
            ));
            out.name = name;
        }
        Ok((out, items))
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
        let fields: Vec<String> = named
            .iter()
            .map(|(n, e, _)| format!("{} = {}", quote(n), quote(e)))
            .collect();
        self.transforms.push(format!(
            "[transforms.{}]\ntype = \"select\"\ninputs = [{}]\nfields = {{ {} }}\n\n",
            quote(base),
            quote(&input.name),
            fields.join(", ")
        ));
        // The record keeps its event time through a select; the stream keeps a time attribute
        // only under the name of an output column that passes it through unchanged.
        let time_expr = input
            .time
            .as_ref()
            .and_then(|t| input.columns.iter().find(|c| &c.name == t))
            .map(|c| c.expr.clone());
        let time = time_expr.and_then(|te| {
            named
                .iter()
                .find(|(_, e, _)| *e == te)
                .map(|(n, _, _)| n.clone())
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
        })
    }
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

fn items(sel: &Select, input: &Stream, scope: &mut dyn Scope) -> Result<Vec<Item>, SqlError> {
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
            other => return Err(unsupported(other, "this select item is")),
        }
    }
    Ok(out)
}

/// The GROUP BY of a windowed query: `window_start`, `window_end` and key columns.
fn group_keys(sel: &Select, input: &Stream) -> Result<Vec<Col>, SqlError> {
    let GroupByExpr::Expressions(exprs, modifiers) = &sel.group_by else {
        return Err(SqlError::span(
            sel.select_token.0.span,
            "GROUP BY ALL is not supported",
        ));
    };
    if !modifiers.is_empty() {
        return Err(SqlError::span(
            sel.select_token.0.span,
            "GROUP BY modifiers (ROLLUP, CUBE, ...) are not supported",
        ));
    }
    let mut keys = Vec::new();
    let (mut start, mut end) = (false, false);
    for e in exprs {
        let name = match e {
            Expr::Identifier(id) => id,
            Expr::CompoundIdentifier(parts) if parts.len() == 2 => &parts[1],
            _ => {
                return Err(SqlError::span(
                    e.span(),
                    "grouping by an expression is not supported yet (group by a column)",
                ))
            }
        };
        match name.value.as_str() {
            "window_start" => start = true,
            "window_end" => end = true,
            key => {
                let Some(col) = input.columns.iter().find(|c| c.name == key) else {
                    return Err(SqlError::span(
                        name.span,
                        format!("no column `{key}` to group by"),
                    ));
                };
                if !is_plain_name(&col.expr) || col.ty.is_time() {
                    return Err(SqlError::span(
                        name.span,
                        format!(
                            "grouping by `{key}` is not supported yet (group by a plain column)"
                        ),
                    ));
                }
                keys.push(col.clone());
            }
        }
    }
    if !(start && end) {
        return Err(SqlError::span(
            sel.select_token.0.span,
            "a window aggregation must GROUP BY window_start, window_end (and any key columns)",
        ));
    }
    Ok(keys)
}

/// Names in a query over a stream: its columns, by name or `alias.name`; `name.field` reads a
/// nested field of a ROW column.
struct ColumnScope<'s> {
    input: &'s Stream,
}

fn resolve(input: &Stream, parts: &[Ident], e: &Expr) -> Result<(String, SqlType), SqlError> {
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

/// Names after a window's GROUP BY: the keys, the window's bounds, and aggregates, each of which
/// becomes one of the window's output fields (`_a0`, `_a1`, ...).
struct WindowScope<'s> {
    input: &'s Stream,
    keys: &'s [Col],
    /// (output field, sluice aggregate, its type).
    aggregates: Vec<(String, String, SqlType)>,
}

impl Scope for WindowScope<'_> {
    fn column(&mut self, parts: &[Ident], e: &Expr) -> Result<(String, SqlType), SqlError> {
        let name = parts.last().map_or("", |p| p.value.as_str());
        match name {
            "window_start" | "window_end" if parts.len() <= 2 => {
                return Ok((name.to_string(), SqlType::Timestamp))
            }
            "window_time" if parts.len() <= 2 => {
                return Ok(("(window_end - 1)".to_string(), SqlType::TimestampLtz))
            }
            _ => {}
        }
        if let Some(k) = self.keys.iter().find(|k| k.name == name) {
            return Ok((k.expr.clone(), k.ty.clone()));
        }
        Err(SqlError::span(
            e.span(),
            format!("`{name}` is neither in the GROUP BY nor inside an aggregate"),
        ))
    }

    fn aggregate(&mut self, f: &Function, e: &Expr) -> Result<Option<(String, SqlType)>, SqlError> {
        let name = f.name.to_string().to_ascii_uppercase();
        let distinct = matches!(&f.args, sqlparser::ast::FunctionArguments::List(l)
            if l.duplicate_treatment == Some(sqlparser::ast::DuplicateTreatment::Distinct));
        let star = matches!(&f.args, sqlparser::ast::FunctionArguments::List(l)
            if matches!(l.args.as_slice(), [sqlparser::ast::FunctionArg::Unnamed(sqlparser::ast::FunctionArgExpr::Wildcard)]));
        let (ours, ty) = if star && name == "COUNT" {
            ("count()".to_string(), SqlType::Integer)
        } else {
            let args = plain_args(f, e)?;
            let [arg] = args.as_slice() else {
                return Err(SqlError::span(
                    e.span(),
                    format!("{name} takes one argument"),
                ));
            };
            if name == "COUNT"
                && !distinct
                && matches!(arg, Expr::Value(v) if matches!(&v.value, sqlparser::ast::Value::Number(n, _) if n == "1"))
            {
                ("count()".to_string(), SqlType::Integer)
            } else {
                let parts = match arg {
                    Expr::Identifier(id) => vec![id.clone()],
                    Expr::CompoundIdentifier(p) => p.clone(),
                    _ => return Err(SqlError::span(arg.span(), format!("{name} over an expression is not supported yet (aggregate a column; compute the value in a view)"))),
                };
                let (field, col_ty) = resolve(self.input, &parts, arg)?;
                if !field.split('.').all(is_plain_name) {
                    return Err(unsupported(
                        *arg,
                        &format!("{name} over a computed value is"),
                    ));
                }
                match (name.as_str(), distinct) {
                    ("COUNT", true) => (format!("count_distinct({field})"), SqlType::Integer),
                    ("COUNT", false) => return Err(SqlError::span(e.span(), "COUNT(column) (counting non-null values) is not supported yet; use COUNT(*)")),
                    (_, true) => return Err(unsupported(e, &format!("{name}(DISTINCT ...) is"))),
                    ("AVG", _) => (format!("avg({field})"), SqlType::Other(String::new())),
                    (other, _) => (format!("{}({field})", other.to_ascii_lowercase()), col_ty),
                }
            }
        };
        if let Some((n, _, t)) = self.aggregates.iter().find(|(_, a, _)| *a == ours) {
            return Ok(Some((n.clone(), t.clone())));
        }
        let n = format!("_a{}", self.aggregates.len());
        self.aggregates.push((n.clone(), ours, ty.clone()));
        Ok(Some((n, ty)))
    }
}
