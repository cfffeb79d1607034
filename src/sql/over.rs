//! OVER aggregations: `SELECT ..., AGG(x) OVER (PARTITION BY k ORDER BY rt <frame>) FROM t
//! [WHERE ...]` (or `OVER w ... WINDOW w AS (...)`) becomes a filter for `WHERE` and an
//! `over_aggregate` transform that adds each aggregate to every row as a field (`_a0`, `_a1`,
//! ...), which the select then reads. As in Flink's streaming mode, the window is ordered by the
//! time attribute ascending, its frame ends at the current row (`ROWS n PRECEDING`,
//! `RANGE INTERVAL ... PRECEDING`, `UNBOUNDED PRECEDING`, or none: RANGE UNBOUNDED), and every
//! OVER of one SELECT uses the same window.

use std::ops::ControlFlow;

use sqlparser::ast::{
    visit_expressions, Expr, Function, Ident, NamedWindowDefinition, NamedWindowExpr, OrderBySort,
    Select, Spanned, Value, WindowFrameBound, WindowFrameUnits, WindowSpec, WindowType,
};

use sqlparser::tokenizer::Span;

use super::expr::{is_plain_name, unsupported, Scope};
use super::query::{groups, items, resolve, Item};
use super::window::WindowScope;
use super::{Col, Compiler, SqlError, SqlType, Stream};
use crate::config::{OrderedTable, TransformConfig};
use crate::operators::over_agg::config::{FrameUnit, OverAggregateConfig, Preceding};

/// Whether a select item calls an aggregate with OVER (ROW_NUMBER is a Top-N's, `sql::dedupe`).
pub(super) fn has_over(sel: &Select) -> bool {
    let found = visit_expressions(&sel.projection, |e| match e {
        Expr::Function(f)
            if f.over.is_some() && !f.name.to_string().eq_ignore_ascii_case("ROW_NUMBER") =>
        {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    });
    found.is_break()
}

/// Names in a select with OVER aggregates: the input's columns (each row passes through) and
/// the aggregates, which must all use one window.
struct OverScope<'s> {
    input: &'s Stream,
    named: &'s [NamedWindowDefinition],
    /// The window, and where its first OVER is.
    spec: Option<(WindowSpec, Span)>,
    aggregates: WindowScope<'s>,
}

impl OverScope<'_> {
    /// The window `over` names or writes out.
    fn window(&self, over: &WindowType, e: &Expr) -> Result<WindowSpec, SqlError> {
        let mut name = match over {
            WindowType::WindowSpec(s) => return Ok(s.clone()),
            WindowType::NamedWindow(n) => n.clone(),
        };
        // `WINDOW w AS v` names another window; a few steps at most, never a cycle.
        for _ in 0..=self.named.len() {
            let Some(NamedWindowDefinition(_, def)) = self.named.iter().find(|d| d.0 == name)
            else {
                return Err(SqlError::span(
                    name.span,
                    format!(
                        "no window `{}` (define it with WINDOW {} AS (...))",
                        name.value, name.value
                    ),
                ));
            };
            match def {
                NamedWindowExpr::WindowSpec(s) => return Ok(s.clone()),
                NamedWindowExpr::NamedWindow(n) => name = n.clone(),
            }
        }
        Err(SqlError::span(
            e.span(),
            "these WINDOW definitions name each other in a cycle",
        ))
    }
}

impl Scope for OverScope<'_> {
    fn column(&mut self, parts: &[Ident], e: &Expr) -> Result<(String, SqlType), SqlError> {
        resolve(self.input, parts, e)
    }

    fn aggregate(&mut self, f: &Function, e: &Expr) -> Result<Option<(String, SqlType)>, SqlError> {
        let Some(over) = &f.over else {
            return Err(SqlError::span(e.span(), format!("{} without OVER beside OVER aggregates: aggregate the rows with GROUP BY in a view, or give it the same OVER window", f.name)));
        };
        let spec = self.window(over, e)?;
        match &self.spec {
            Some((s, _)) if *s != spec => {
                return Err(SqlError::span(e.span(), "every OVER aggregate of one SELECT must use the same window, as in Flink's streaming mode: compute the others in another view"));
            }
            Some(_) => {}
            None => self.spec = Some((spec, e.span())),
        }
        let mut plain = f.clone();
        plain.over = None;
        self.aggregates.aggregate(&plain, e)
    }
}

impl Compiler {
    /// `SELECT ..., AGG(x) OVER w, ... FROM stream [WHERE ...]`.
    pub(super) fn over(
        &mut self,
        sel: &Select,
        input: Stream,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        if groups(sel) {
            return Err(SqlError::span(sel.select_token.0.span, "GROUP BY with OVER aggregates in one SELECT is not supported: group in a view, then aggregate OVER the view (or the other way round)"));
        }
        if input.updating {
            return Err(SqlError::span(sel.select_token.0.span, "an OVER aggregation reads an append-only input, as Flink's (\"OverAggregate doesn't support consuming update changes\"), but this one is an updating result (a GROUP BY, an outer or regular join, a Top-N): aggregate over the rows before it"));
        }
        let input = self.filter(sel.selection.as_ref(), input, &format!("{base}_where"))?;
        let mut scope = OverScope {
            input: &input,
            named: &sel.named_window,
            spec: None,
            aggregates: WindowScope {
                input: &input,
                keys: &[],
                aggregates: Vec::new(),
                windowed: false,
                no_values: Some("OVER"),
            },
        };
        let items = items(sel, &input, &mut scope)?;
        let Some((spec, at)) = scope.spec.take() else {
            return Err(SqlError::span(
                sel.select_token.0.span,
                "expected an aggregate with OVER (...)",
            ));
        };
        let added = std::mem::take(&mut scope.aggregates.aggregates);
        let partition_by = partition(&spec, &input)?;
        ordered_by_time(&spec, &input, sel)?;
        let (frame, preceding) = frame(&spec, at)?;
        let name = format!("{base}_over");
        let table = OverAggregateConfig {
            inputs: vec![input.name.clone()],
            partition_by,
            frame,
            preceding,
            aggregates: OrderedTable(
                added
                    .iter()
                    .map(|(n, a, _)| (n.clone(), a.clone()))
                    .collect(),
            ),
            late_events: None,
        };
        self.push_transform(&name, TransformConfig::OverAggregate(table));
        let mut columns = input.columns.clone();
        columns.extend(added.into_iter().map(|(name, _, ty)| Col {
            expr: name.clone(),
            name,
            ty,
        }));
        let out = Stream {
            name,
            columns,
            time: input.time,
            window: false,
            updating: false,
        };
        Ok((out, items))
    }
}

/// The PARTITION BY fields: columns of the input.
fn partition(spec: &WindowSpec, input: &Stream) -> Result<Vec<String>, SqlError> {
    let mut keys = Vec::new();
    for p in &spec.partition_by {
        let parts = match p {
            Expr::Identifier(id) => vec![id.clone()],
            Expr::CompoundIdentifier(parts) => parts.clone(),
            _ => return Err(unsupported(p, "an OVER window's PARTITION BY other than columns is (compute the value in a view first)")),
        };
        let (field, _) = resolve(input, &parts, p)?;
        if !field.split('.').all(is_plain_name) {
            return Err(unsupported(
                p,
                "partitioning an OVER window by a computed column is (compute it in a view first)",
            ));
        }
        keys.push(field);
    }
    Ok(keys)
}

/// The ORDER BY: the input's time attribute, ascending.
fn ordered_by_time(spec: &WindowSpec, input: &Stream, sel: &Select) -> Result<(), SqlError> {
    let time = input.time.map(|i| &input.columns[i]);
    let why = |at: Span| {
        let name = time.map_or("no time attribute (no WATERMARK)".to_string(), |c| {
            format!("`{}`", c.name)
        });
        SqlError::span(at, format!("an OVER window in a streaming query is ordered by the input's time attribute ascending, as Flink requires (the input's is {name})"))
    };
    let [o] = spec.order_by.as_slice() else {
        return Err(why(sel.select_token.0.span));
    };
    let parts = match &o.expr {
        Expr::Identifier(id) => vec![id.clone()],
        Expr::CompoundIdentifier(parts) => parts.clone(),
        _ => return Err(why(o.expr.span())),
    };
    let (field, _) = resolve(input, &parts, &o.expr)?;
    let time_expr = time.map(|c| c.expr.as_str());
    if Some(field.as_str()) != time_expr || matches!(o.options.sort, Some(OrderBySort::Desc)) {
        return Err(why(o.expr.span()));
    }
    Ok(())
}

/// The frame as the transform's `frame` and `preceding`: it ends at the current row.
fn frame(spec: &WindowSpec, at: Span) -> Result<(FrameUnit, Option<Preceding>), SqlError> {
    let Some(f) = &spec.window_frame else {
        return Ok((FrameUnit::Range, None));
    };
    let ends_here = matches!(f.end_bound, None | Some(WindowFrameBound::CurrentRow));
    let refuse = |why: &str| {
        Err(SqlError::span(
            at,
            format!("this OVER window's frame: {why}, as Flink's streaming mode requires"),
        ))
    };
    if !ends_here {
        return refuse("a frame must end at CURRENT ROW (FOLLOWING rows are not known yet)");
    }
    let unit = match f.units {
        WindowFrameUnits::Rows => FrameUnit::Rows,
        WindowFrameUnits::Range => FrameUnit::Range,
        WindowFrameUnits::Groups => {
            return refuse("GROUPS frames are not supported; use ROWS or RANGE")
        }
    };
    let preceding = match (&f.start_bound, unit) {
        (WindowFrameBound::Preceding(None), _) => None,
        (WindowFrameBound::CurrentRow, FrameUnit::Rows) => Some(Preceding::Rows(0)),
        (WindowFrameBound::CurrentRow, FrameUnit::Range) => Some(Preceding::Text("0ms".into())),
        (WindowFrameBound::Preceding(Some(n)), FrameUnit::Rows) => match n.as_ref() {
            Expr::Value(v) => match &v.value {
                Value::Number(s, _) => match s.parse::<u64>() {
                    Ok(n) => Some(Preceding::Rows(n)),
                    Err(_) => return refuse("ROWS n PRECEDING takes a whole number of rows"),
                },
                _ => return refuse("ROWS n PRECEDING takes a whole number of rows"),
            },
            _ => return refuse("ROWS n PRECEDING takes a whole number of rows"),
        },
        (WindowFrameBound::Preceding(Some(d)), FrameUnit::Range) => {
            let ms = super::time::interval_ms(d)?;
            Some(Preceding::Text(format!("{ms}ms")))
        }
        (WindowFrameBound::Following(_), _) => {
            return refuse("a frame must start at or before the current row")
        }
    };
    Ok((unit, preceding))
}
