//! The event-time temporal join: `a JOIN t FOR SYSTEM_TIME AS OF a.rt ON a.k = t.pk` (inner or
//! LEFT) becomes a `temporal_join` of `a` with the versions of `t`, a table with a PRIMARY KEY
//! and a WATERMARK or a versioned (keep-last) view.

use sqlparser::ast::{Expr, Select, Spanned, TableFactor};

use super::{key_expr, key_pair, prefixed, Conditions, Kind, Side};
use crate::config::{JoinOnConfig, OutOfOrderVersions, TemporalJoinConfig, TransformConfig};
use crate::sql::expr::unsupported;
use crate::sql::query::Item;
use crate::sql::{Compiler, SqlError, Stream};

/// `FOR SYSTEM_TIME AS OF` must name the input's time attribute: sluice joins in event time.
fn check_as_of(time: &Expr, input: &Side) -> Result<(), SqlError> {
    let at_ok = match time {
        Expr::CompoundIdentifier(p) if p.len() == 2 => {
            p[0].value == input.alias && Some(p[1].value.as_str()) == input.stream.time_name()
        }
        Expr::Identifier(i) => Some(i.value.as_str()) == input.stream.time_name(),
        _ => false,
    };
    if at_ok {
        return Ok(());
    }
    Err(SqlError::span(time.span(), format!("FOR SYSTEM_TIME AS OF must name the time attribute of `{}` ({}.{}): sluice joins in event time", input.alias, input.alias, input.stream.time_name().unwrap_or("its WATERMARK column"))))
}

/// A temporal join writes the table's row into `table`: the input must have no column of that
/// name.
fn check_no_table_column(sel: &Select, input: &Side) -> Result<(), SqlError> {
    if input
        .stream
        .columns
        .iter()
        .any(|c| c.name == "table" || c.expr == "table")
    {
        return Err(SqlError::span(sel.select_token.0.span, format!("`{}` has a column named `table`, where the join writes the versioned table's row: rename it in a view", input.alias)));
    }
    Ok(())
}

impl Compiler {
    pub(super) fn temporal(
        &mut self,
        sel: &Select,
        input: Side,
        table_tf: &TableFactor,
        time: &Expr,
        c: Conditions,
        base: &str,
    ) -> Result<(Stream, Vec<Item>), SqlError> {
        let Conditions {
            kind,
            conds,
            post,
            at,
        } = c;
        let TableFactor::Table { name, .. } = table_tf else {
            return Err(unsupported(table_tf, "this versioned table is"));
        };
        let table_name = crate::sql::last_name(name);
        let pk = self
            .tables
            .get(&table_name)
            .map(|t| t.primary_key.clone())
            .or_else(|| self.versioned_views.get(&table_name).cloned())
            .unwrap_or_default();
        self.reading_versioned = true;
        let table = self.side(table_tf, &format!("{base}_t"));
        self.reading_versioned = false;
        let table = table?;
        if pk.is_empty() || table.stream.time.is_none() {
            return Err(SqlError::span(table_tf.span(), format!("`{table_name}` is not a versioned table: a temporal join needs a table with a PRIMARY KEY (...) NOT ENFORCED and a WATERMARK, or a versioned view (ROW_NUMBER() OVER (PARTITION BY k ORDER BY rt DESC) ... WHERE rn = 1), as Flink's event-time temporal join does")));
        }
        check_as_of(time, &input)?;
        let kind = match kind {
            Kind::Inner => Kind::Inner,
            Kind::Left => Kind::Left,
            _ => {
                return Err(unsupported(
                    table_tf,
                    "a temporal join other than JOIN and LEFT JOIN is",
                ))
            }
        };
        let mut keys = Vec::new();
        let mut rest = Vec::new();
        for c in conds {
            match key_pair(c, &input, &table)? {
                Some(pair) => keys.push(pair),
                None => rest.push(c),
            }
        }
        let [(in_key, t_key)] = keys.as_slice() else {
            return Err(SqlError::span(at, format!("a temporal join needs exactly one equality of `{table_name}`'s primary key with a column of `{}` (a composite key is not supported yet)", input.alias)));
        };
        if pk != [t_key.name.clone()] {
            return Err(SqlError::span(at, format!("the join condition must equate `{table_name}`'s primary key ({}) with a column of `{}`", pk.join(", "), input.alias)));
        }
        if kind != Kind::Inner && !rest.is_empty() {
            return Err(unsupported(
                rest[0],
                "in a LEFT temporal join, a condition in ON other than the key equality is",
            ));
        }
        check_no_table_column(sel, &input)?;
        let input = self.pathed(input, None, &format!("{base}_in"));
        let table = self.pathed(table, None, &format!("{base}_tv"));
        let in_key = key_expr(&input, in_key);
        let t_key = key_expr(&table, t_key);
        let name = format!("{base}_join");
        // Flink's keep-last view never emits a row older than its key's last one.
        let out_of_order_versions = if self.versioned_views.contains_key(&table_name) {
            OutOfOrderVersions::Drop
        } else {
            OutOfOrderVersions::Keep
        };
        let join = TransformConfig::TemporalJoin(TemporalJoinConfig {
            input: input.stream.name.clone(),
            table: table.stream.name.clone(),
            on: JoinOnConfig {
                input: in_key,
                table: t_key,
            },
            kind: kind.temporal(),
            late_events: None,
            out_of_order_versions,
            hot_keys: None,
        });
        self.push_transform(&name, join);
        let sides = vec![input, prefixed(table, "table", false)];
        self.finish_join(
            sel,
            sides,
            (rest.into_iter().chain(post).collect(), false),
            &name,
            base,
        )
    }
}
