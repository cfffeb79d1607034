//! A window table function's aggregation: `FROM TABLE(TUMBLE|HOP|CUMULATE(TABLE t,
//! DESCRIPTOR(rt), ...)) GROUP BY window_start, window_end, keys` becomes a filter for `WHERE`, a
//! window transform whose aggregates are named `_a0`, `_a1`, ..., and a filter for `HAVING`.

use sqlparser::ast::{Expr, Function, GroupByExpr, Ident, Select, Spanned};

use super::expr::{is_plain_name, plain_args, translate, unsupported, Scope};
use super::lex::PARTITION_BY;
use super::parts::{ms, Window};
use super::query::{items, resolve, Item};
use super::time::interval_ms;
use super::{Col, Compiler, SqlError, SqlType, Stream};
use crate::config::{HotKeyMode, HotKeysConfig, WindowConfig};

/// The parts of a window table function's call: `KIND(TABLE t, [PARTITION BY ...,]
/// DESCRIPTOR(rt), intervals...)`.
struct WindowCall<'a> {
    call: Expr,
    kind: String,
    partition: Option<&'a Function>,
    table: &'a Ident,
    time_col: Ident,
    args: Vec<&'a Expr>,
}

impl<'a> WindowCall<'a> {
    fn parse(tvf: &'a Function) -> Result<WindowCall<'a>, SqlError> {
        let call = Expr::Function(tvf.clone());
        let kind = tvf.name.to_string().to_ascii_uppercase();
        let args = plain_args(tvf, &call)?;
        let partition = match args.get(1).copied() {
            Some(Expr::Function(f)) if f.name.to_string() == PARTITION_BY => Some(f),
            _ => None,
        };
        let args = if partition.is_some() {
            [&args[..1], &args[2..]].concat()
        } else {
            args
        };
        let (Some(Expr::Identifier(table)), Some(Expr::Function(desc))) =
            (args.first().copied(), args.get(1).copied())
        else {
            return Err(SqlError::span(
                call.span(),
                format!("expected {kind}(TABLE name, DESCRIPTOR(time_column), ...)"),
            ));
        };
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
        Ok(WindowCall {
            call,
            kind,
            partition,
            table,
            time_col,
            args,
        })
    }

    /// The window's shape from its kind and intervals.
    fn window(&self) -> Result<WindowConfig, SqlError> {
        let kind = self.kind.as_str();
        let sizes = self.args[2..]
            .iter()
            .map(|a| interval_ms(a))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(match (kind, sizes.as_slice()) {
            ("TUMBLE", [size]) => WindowConfig::Tumbling { size: ms(*size) },
            ("HOP", [slide, size]) => WindowConfig::Sliding {
                size: ms(*size),
                slide: ms(*slide),
            },
            ("CUMULATE", [step, max]) => WindowConfig::Cumulative {
                step: ms(*step),
                max_size: ms(*max),
            },
            ("SESSION", [gap]) => WindowConfig::Session { gap: ms(*gap) },
            ("TUMBLE" | "HOP" | "CUMULATE" | "SESSION", _) => {
                let n = if kind == "TUMBLE" || kind == "SESSION" {
                    1
                } else {
                    2
                };
                return Err(SqlError::span(
                    self.call.span(),
                    format!("{kind} takes TABLE, DESCRIPTOR and {n} interval(s)"),
                ));
            }
            _ => {
                return Err(unsupported(
                    &self.call,
                    &format!("the window function {kind} is"),
                ))
            }
        })
    }
}

impl Compiler {
    /// `SELECT ... FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(rt), size)) GROUP BY window_start, window_end, ...`.
    pub(super) fn windowed(
        &mut self,
        sel: &Select,
        tvf: &Function,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let w = WindowCall::parse(tvf)?;
        let input = self.stream_of(&w.table.value, w.table.span)?;
        let (mine, others): (Vec<_>, Vec<_>) = std::mem::take(&mut self.hints)
            .into_iter()
            .partition(|h| h.table == w.table.value);
        self.hints = others;
        let hinted = super::hints::window_settings(&mine)?;
        check_time_attribute(&w, &input)?;
        let window = w.window()?;
        let from_source = self.sources.values().any(|(_, s)| s.name == input.name);
        let input = self.filter(sel.selection.as_ref(), input, &format!("{base}_where"))?;
        let keys = group_keys(sel, &input, true)?;
        check_partition(&w.kind, w.partition, &keys, &w.call)?;
        let mut scope = WindowScope {
            input: &input,
            keys: &keys,
            aggregates: Vec::new(),
            windowed: true,
            no_values: Some("window"),
        };
        let items = items(sel, &input, &mut scope)?;
        let having = match &sel.having {
            Some(h) => Some(translate(h, &mut scope)?.0),
            None => None,
        };
        let mut aggs: Vec<(String, String)> = scope
            .aggregates
            .iter()
            .map(|(n, a, _)| (n.clone(), a.clone()))
            .collect();
        if aggs.is_empty() {
            // Flink groups a window without aggregates (the distinct keys per window); sluice's
            // window needs one: a count no output column reads.
            aggs.push(("_rows".into(), "count()".into()));
        }
        let hot_keys = hinted.hot_keys.unwrap_or_else(|| {
            let mut h = HotKeysConfig::default();
            if keys.is_empty() && w.kind != "SESSION" && from_source {
                // One group per window (GROUP BY only the window): one shard would aggregate
                // every row while the others idle, so it is two-phase, as Flink's local-global
                // aggregation; the results are the same (README "Hot keys").
                h.mode = HotKeyMode::Salt;
            }
            h
        });
        let window_name = format!("{base}_window");
        let late_events = self.late_events_sink(hinted.late_table.as_ref(), &window_name)?;
        let table = Window {
            input: input.name.clone(),
            group_by: keys.iter().map(|k| k.expr.clone()).collect(),
            window,
            allowed_lateness_ms: hinted.lateness_ms.unwrap_or(0),
            late_events,
            aggregates: aggs,
            hot_keys,
        };
        self.push_transform(&window_name, table.table());
        let mut out = window_output(window_name, &keys);
        if let Some(h) = having {
            let name = format!("{base}_having");
            self.push_filter(&name, &out.name, &h);
            out.name = name;
        }
        Ok((out, items))
    }

    /// `/*+ OPTIONS('sluice.late_events' = 't') */`: the window's late events, as a stream the
    /// table `late` (declared with CREATE TABLE) is written from.
    fn late_events_sink(
        &mut self,
        late: Option<&(String, sqlparser::tokenizer::Span)>,
        window_name: &str,
    ) -> Result<Option<String>, SqlError> {
        let Some((late, span)) = late else {
            return Ok(None);
        };
        let Some(t) = self.tables.get(late) else {
            return Err(SqlError::span(
                *span,
                format!("sluice.late_events: no table `{late}` (declare it with CREATE TABLE)"),
            ));
        };
        let late_stream = format!("{window_name}_late");
        let name = t.name.clone();
        self.sinks
            .entry(name)
            .or_default()
            .push(late_stream.clone());
        Ok(Some(late_stream))
    }
}

/// The DESCRIPTOR must name the input's time attribute (its WATERMARK column).
fn check_time_attribute(w: &WindowCall, input: &Stream) -> Result<(), SqlError> {
    if input.time_name() == Some(w.time_col.value.as_str()) {
        return Ok(());
    }
    Err(SqlError::span(
        w.time_col.span,
        format!(
            "`{}` is not the time attribute of `{}` (its WATERMARK column{})",
            w.time_col.value,
            w.table.value,
            input.time_name().map_or(
                "; it has none: a window needs one, so declare a WATERMARK on the table it reads (and keep that column in the views between)".to_string(),
                |t| format!(" is `{t}`")
            )
        ),
    ))
}

/// The window's output: its keys, `window_start`, `window_end` and `window_time`.
fn window_output(name: String, keys: &[Col]) -> Stream {
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
    // As in Flink, window_time (window_end - 1 ms, the time every result of the window
    // carries) is the results' time attribute: a later window or an interval join reads it.
    columns.push(Col {
        name: "window_time".into(),
        ty: SqlType::TimestampLtz,
        expr: "(window_end - 1)".into(),
    });
    let time = Some(columns.len() - 1);
    Stream {
        name,
        columns,
        time,
        window: true,
        updating: false,
    }
}

/// Sessions are per key in sluice, as Flink's are per `PARTITION BY` key: the two must name the
/// same columns (no PARTITION BY: sessions over all rows, so no GROUP BY keys either). Only
/// SESSION takes a PARTITION BY.
fn check_partition(
    kind: &str,
    partition: Option<&Function>,
    keys: &[Col],
    call: &Expr,
) -> Result<(), SqlError> {
    let Some(p) = partition else {
        if kind == "SESSION" && !keys.is_empty() {
            return Err(SqlError::span(call.span(), "SESSION without PARTITION BY makes sessions over all rows, which sluice does not run per group: write SESSION(TABLE t PARTITION BY <the GROUP BY keys>, ...)"));
        }
        return Ok(());
    };
    let pexpr = Expr::Function(p.clone());
    if kind != "SESSION" {
        return Err(SqlError::span(
            pexpr.span(),
            format!("{kind} takes no PARTITION BY (only SESSION does)"),
        ));
    }
    let mut names = Vec::new();
    for a in plain_args(p, &pexpr)? {
        match a {
            Expr::Identifier(id) => names.push(id.value.clone()),
            other => {
                return Err(SqlError::span(
                    other.span(),
                    "PARTITION BY takes column names",
                ))
            }
        }
    }
    let mut want: Vec<String> = keys.iter().map(|k| k.name.clone()).collect();
    names.sort();
    want.sort();
    if names != want {
        return Err(SqlError::span(pexpr.span(), format!("the PARTITION BY columns ({}) must be the GROUP BY keys ({}): sluice keeps sessions per group", names.join(", "), want.join(", "))));
    }
    Ok(())
}

/// The GROUP BY of a query: key columns, and for a window aggregation (`windowed`) its
/// `window_start` and `window_end` (elsewhere those are columns like any other: a GROUP BY over a
/// window's results).
pub(super) fn group_keys(
    sel: &Select,
    input: &Stream,
    windowed: bool,
) -> Result<Vec<Col>, SqlError> {
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
            "window_start" if windowed => start = true,
            "window_end" if windowed => end = true,
            // Determined by the window (window_end - 1), as Flink lets it be grouped by.
            "window_time" if windowed => {}
            key => {
                let Some(col) = input.columns.iter().find(|c| c.name == key) else {
                    return Err(SqlError::span(
                        name.span,
                        format!("no column `{key}` to group by"),
                    ));
                };
                if !is_plain_name(&col.expr) || (windowed && col.ty.is_time()) {
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
    if windowed && !(start && end) {
        return Err(SqlError::span(
            sel.select_token.0.span,
            "a window aggregation must GROUP BY window_start, window_end (and any key columns)",
        ));
    }
    Ok(keys)
}

/// Names after a GROUP BY: the keys, a window's bounds (`windowed`), and aggregates, each of
/// which becomes one of the window's (or group aggregate's) output fields (`_a0`, `_a1`, ...).
pub(super) struct WindowScope<'s> {
    pub(super) input: &'s Stream,
    pub(super) keys: &'s [Col],
    /// (output field, sluice aggregate, its type).
    pub(super) aggregates: Vec<(String, String, SqlType)>,
    pub(super) windowed: bool,
    /// Which aggregation this is, where it cannot keep values as written (FIRST_VALUE,
    /// LAST_VALUE, MIN/MAX of a string): `Some("window")`, `Some("OVER")`; `None` for the group
    /// aggregate, which can.
    pub(super) no_values: Option<&'static str>,
}

impl Scope for WindowScope<'_> {
    fn column(&mut self, parts: &[Ident], e: &Expr) -> Result<(String, SqlType), SqlError> {
        let name = parts.last().map_or("", |p| p.value.as_str());
        match name {
            "window_start" | "window_end" if self.windowed && parts.len() <= 2 => {
                return Ok((name.to_string(), SqlType::Timestamp))
            }
            "window_time" if self.windowed && parts.len() <= 2 => {
                return Ok(("(window_end - 1)".to_string(), SqlType::TimestampLtz))
            }
            _ => {}
        }
        if let Some(k) = self.keys.iter().find(|k| k.name == name) {
            return Ok((k.expr.clone(), k.ty.clone()));
        }
        // A name the input does not have at all gets that message, not the grouping one.
        resolve(self.input, parts, e)?;
        Err(SqlError::span(
            e.span(),
            format!("`{name}` is neither in the GROUP BY nor inside an aggregate"),
        ))
    }

    fn aggregate(&mut self, f: &Function, e: &Expr) -> Result<Option<(String, SqlType)>, SqlError> {
        let name = f.name.to_string().to_ascii_uppercase();
        if f.filter.is_some() {
            // A group aggregate computes it first (`group::computed`); a window does not yet.
            return Err(unsupported(
                e,
                &format!("{name}(...) FILTER (WHERE ...) in a window aggregation is"),
            ));
        }
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
                    ("COUNT", false) => (format!("count({field})"), SqlType::Integer),
                    // HyperLogLog past 256 values, as Flink's own (~1% error; sluice's ~1.6%).
                    ("APPROX_COUNT_DISTINCT", false) => {
                        (format!("approx_count_distinct({field})"), SqlType::Integer)
                    }
                    (_, true) => return Err(unsupported(e, &format!("{name}(DISTINCT ...) is"))),
                    // Flink's AVG of an integer column is an integer: the quotient truncated.
                    ("AVG", _) if col_ty == SqlType::Integer => {
                        let (n, _) =
                            self.add(format!("avg({field})"), SqlType::Other(String::new()));
                        return Ok(Some((format!("to_int({n})"), SqlType::Integer)));
                    }
                    ("AVG", _) => (format!("avg({field})"), SqlType::Other(String::new())),
                    ("FIRST_VALUE" | "LAST_VALUE" | "MIN" | "MAX", _)
                        if self.no_values.is_some() && keeps_value(&name, &col_ty) =>
                    {
                        let what = self.no_values.unwrap_or_default();
                        return Err(unsupported(
                            e,
                            &format!(
                                "{name} of a {} column in a{} {what} aggregation is",
                                type_name(&col_ty),
                                if what == "OVER" { "n" } else { "" }
                            ),
                        ));
                    }
                    ("FIRST_VALUE" | "LAST_VALUE", _) => {
                        (format!("{}({field})", name.to_ascii_lowercase()), col_ty)
                    }
                    ("MIN" | "MAX", _) if keeps_value(&name, &col_ty) => (
                        format!("{}_string({field})", name.to_ascii_lowercase()),
                        col_ty,
                    ),
                    (other, _) => (format!("{}({field})", other.to_ascii_lowercase()), col_ty),
                }
            }
        };
        Ok(Some(self.add(ours, ty)))
    }
}

/// Whether aggregate `name` over a column of type `ty` keeps the value as written (FIRST_VALUE,
/// LAST_VALUE, and MIN/MAX of a string, a boolean or a DATE/TIME) rather than a number.
fn keeps_value(name: &str, ty: &SqlType) -> bool {
    matches!(name, "FIRST_VALUE" | "LAST_VALUE")
        || matches!(ty, SqlType::String | SqlType::Boolean)
        || matches!(ty, SqlType::Other(t) if !t.is_empty())
}

fn type_name(ty: &SqlType) -> &str {
    match ty {
        SqlType::String => "STRING",
        SqlType::Boolean => "BOOLEAN",
        SqlType::Other(t) if !t.is_empty() => t,
        _ => "non-numeric",
    }
}

impl WindowScope<'_> {
    /// The window output field holding aggregate `ours`, added once however often it is used.
    fn add(&mut self, ours: String, ty: SqlType) -> (String, SqlType) {
        if let Some((n, _, t)) = self.aggregates.iter().find(|(_, a, _)| *a == ours) {
            return (n.clone(), t.clone());
        }
        let n = format!("_a{}", self.aggregates.len());
        self.aggregates.push((n.clone(), ours, ty.clone()));
        (n, ty)
    }
}
