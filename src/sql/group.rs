//! A GROUP BY without a window table function (or aggregates without any GROUP BY): Flink's
//! group aggregate, an updating result. `SELECT keys, aggregates FROM t [WHERE ..] GROUP BY keys
//! [HAVING ..]` becomes a filter for `WHERE`, a `group_aggregate` transform whose aggregates are
//! named `_a0`, `_a1`, ..., and a filter for `HAVING`. Its rows have no time attribute, as in
//! Flink, so no window or time-bounded join can read them.

use sqlparser::ast::{Expr, Function, Ident, Select};

use super::expr::{translate, Scope};
use super::query::{items, resolve, Item};
use super::window::{group_keys, WindowScope};
use super::{Col, Compiler, SqlError, SqlType, Stream};
use crate::config::{OrderedTable, TransformConfig};
use crate::operators::group_agg::config::GroupAggregateConfig;

impl Compiler {
    /// `SELECT ... FROM stream [WHERE ...] GROUP BY keys [HAVING ...]`.
    pub(super) fn grouped(
        &mut self,
        sel: &Select,
        input: Stream,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let input = self.filter(sel.selection.as_ref(), input, &format!("{base}_where"))?;
        let keys = group_keys(sel, &input, false)?;
        let mut scope = WindowScope {
            input: &input,
            keys: &keys,
            aggregates: Vec::new(),
            windowed: false,
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
        let name = format!("{base}_group");
        let table = GroupAggregateConfig {
            inputs: vec![input.name.clone()],
            group_by: keys.iter().map(|k| k.expr.clone()).collect(),
            aggregates: OrderedTable(aggregates),
        };
        self.push_transform(&name, TransformConfig::GroupAggregate(table));
        let mut out = Stream {
            name,
            columns: keys.iter().map(|k| Col { ..k.clone() }).collect(),
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
