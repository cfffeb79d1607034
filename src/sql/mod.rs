//! The Flink SQL front end: `CREATE TABLE`, `CREATE VIEW` and `INSERT INTO ... SELECT` statements
//! compiled into the same typed tables a TOML job's `[sources]`, `[transforms]` and `[sinks]` parse
//! into ([`Compiled`]), which `plan::build` then validates like a hand-written config, its
//! problems pointed at the SQL statement each part comes from. So a SQL job and its TOML twin are
//! one job: same operators, same state, same checkpoints, and `sluice explain` shows the graph a
//! statement became (and the equivalent TOML, for reading). A table's `WITH` options are mapped
//! by its connector (`connectors::sql_source`, `connectors::sql_sink`).
//!
//! Tables become sources only when a query reads them and sinks only when one is written. Each
//! query becomes a chain of transforms named after its view, or `insert_N_<sink>` for an INSERT:
//! `_where` (a filter), `_window` (a window table function's GROUP BY), `_having`, and the final
//! select, which names the output columns as the view or the sink table declares them.

mod builtins;
pub mod catalog;
pub mod ddl;
mod dedupe;
mod error;
pub mod export;
mod expr;
mod functions;
mod group;
mod group_window;
mod hints;
pub mod job;
mod join;
mod lex;
pub mod options;
mod over;
mod parts;
mod prune;
mod query;
pub mod settings;
#[cfg(test)]
mod tests;
mod time;
mod top_n;
pub mod types;
mod window;

use std::collections::BTreeMap;

use crate::config::TransformConfig;
use crate::connectors::{SinkConfig, SourceConfig};
use sqlparser::ast::{ObjectName, Statement};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Span, TokenWithSpan};

pub use error::SqlError;
use lex::{leading, FlinkDialect};
use types::SqlType;

/// One column of a stream: its name, its type, and how the expression language reads it.
#[derive(Debug, Clone)]
pub struct Col {
    pub name: String,
    pub ty: SqlType,
    pub expr: String,
}

/// A stream of the graph as SQL sees it: a table read as a source, or a view.
#[derive(Debug, Clone)]
pub struct Stream {
    /// Its name in the graph (a source or a transform).
    pub name: String,
    pub columns: Vec<Col>,
    /// The time attribute column (`rt` of `WATERMARK FOR rt`), as an index into `columns`, if the
    /// stream still has one. An index, not a name: a join's columns may repeat a name.
    pub time: Option<usize>,
    /// Its rows are a window aggregation's results (through filters and selects): those of one
    /// window carry that window's time, which is what a window Top-N ranks them by.
    pub window: bool,
    /// Its rows are an updating result (a GROUP BY without a window, through filters and
    /// selects): only a table that takes a changelog may be written from it.
    pub updating: bool,
}

impl Stream {
    /// The time attribute column's name.
    pub fn time_name(&self) -> Option<&str> {
        self.time.map(|i| self.columns[i].name.as_str())
    }
}

/// What a SQL script compiles to: the typed tables of its sources, transforms and sinks, in the
/// order they were made, and where in the SQL each comes from.
#[derive(Debug, Clone, Default)]
pub struct Compiled {
    pub sources: Vec<(String, SourceConfig)>,
    pub transforms: Vec<(String, TransformConfig)>,
    pub sinks: Vec<(String, SinkConfig)>,
    /// Per part, (`sources` | `transforms` | `sinks`, name): the line and column of the
    /// statement (or table) it comes from.
    pub origins: BTreeMap<(&'static str, String), (u64, u64)>,
}

impl Compiled {
    /// The tables as TOML, for reading (`sluice explain`).
    pub fn toml(&self) -> String {
        let mut out = String::new();
        for (n, s) in &self.sources {
            out += &crate::config::print::table("sources", n, s);
        }
        for (n, t) in &self.transforms {
            out += &crate::config::print::table("transforms", n, t);
        }
        for (n, s) in &self.sinks {
            out += &crate::config::print::table("sinks", n, s);
        }
        out
    }

    /// The transform `name`, if the script made one.
    pub fn transform(&self, name: &str) -> Option<&TransformConfig> {
        self.transforms
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t)
    }
}

/// Compiles a whole SQL script into the typed tables of its sources, transforms and sinks.
pub fn compile(sql: &str) -> Result<Compiled, SqlError> {
    let mut c = Compiler::default();
    for st in lex::statements(sql)? {
        c.hints = st.hints;
        c.at = st
            .tokens
            .first()
            .map_or((1, 1), |t| (t.span.start.line, t.span.start.column));
        c.statement(&st.tokens)?;
        if let Some(h) = c.hints.first() {
            return Err(SqlError::span(h.span, format!("this hint on `{}` applies to nothing: sluice's options set the window of a window table function, so write it on the table inside one, TUMBLE(TABLE {} /*+ OPTIONS(...) */, ...), or the hot keys of a GROUP BY reading the table directly", h.table, h.table)));
        }
    }
    c.finish()
}

#[derive(Default)]
struct Compiler {
    tables: BTreeMap<String, ddl::Table>,
    views: BTreeMap<String, Stream>,
    /// Sources already made, by table name: their table, the stream they are, and where the
    /// table was declared.
    sources: BTreeMap<String, (SourceConfig, Stream)>,
    /// Transforms made so far, in order, each with where its statement starts.
    transforms: Vec<(String, TransformConfig, (u64, u64))>,
    /// Sink table name -> the streams inserted into it.
    sinks: BTreeMap<String, Vec<String>>,
    inserts: usize,
    /// `SET 'table.exec.state.ttl'`, in milliseconds: how long a deduplication remembers a key.
    state_ttl: Option<i64>,
    /// `SET 'table.exec.source.idle-timeout'`, in milliseconds.
    idle_timeout: Option<i64>,
    /// `SET 'table.exec.mini-batch.enabled' = 'true'` and `table.optimizer.agg-phase-strategy`
    /// not `ONE_PHASE`: group aggregates over sources combine hot groups (`hot_keys = auto`), as
    /// Flink's local-global aggregation.
    two_phase: settings::TwoPhase,
    /// Set while a view's top query compiles if it has the shape of a versioned view: its
    /// ROW_NUMBER may then keep the last row per key.
    keep_last_ok: bool,
    /// The primary key of the versioned view just compiled, if it was one.
    keep_last_keys: Option<Vec<String>>,
    /// Versioned views (ROW_NUMBER ... DESC, rn = 1) by name, with their primary key.
    versioned_views: BTreeMap<String, Vec<String>>,
    /// Set while a temporal join reads its versioned table: the one reader of a versioned view.
    reading_versioned: bool,
    /// The current statement's hints not yet applied.
    hints: Vec<hints::Hint>,
    /// Where the statement being compiled starts (line, column): the parts it makes come from
    /// there.
    at: (u64, u64),
}

impl Compiler {
    fn statement(&mut self, tokens: &[TokenWithSpan]) -> Result<(), SqlError> {
        let head = leading(tokens, 4);
        let head: Vec<&str> = head.iter().map(String::as_str).collect();
        let at = tokens[0].span;
        match head.as_slice() {
            ["EXECUTE", "STATEMENT", "SET", "BEGIN", ..] => self.statement_or_end(&tokens[4..], at),
            // The SQL client's form: `BEGIN STATEMENT SET;` on its own, the INSERTs, `END;`.
            ["BEGIN", "STATEMENT", "SET"] if tokens.len() == 3 => Ok(()),
            ["BEGIN", "STATEMENT", "SET", ..] => self.statement_or_end(&tokens[3..], at),
            ["END", ..] if tokens.len() == 1 => Ok(()),
            ["CREATE", "TABLE", ..] | ["CREATE", "TEMPORARY", "TABLE", ..] => {
                let table = ddl::create_table(tokens)?;
                if self.tables.contains_key(&table.name) || self.views.contains_key(&table.name) {
                    return Err(SqlError::span(table.span, format!("`{}` is already defined", table.name)));
                }
                self.tables.insert(table.name.clone(), table);
                Ok(())
            }
            ["CREATE", "VIEW", ..] | ["CREATE", "TEMPORARY", "VIEW", ..] => self.view(tokens),
            ["INSERT", ..] => self.insert(tokens),
            ["SET", ..] => self.set(tokens),
            _ => Err(SqlError::span(at, format!("`{}` statements are not supported (supported: CREATE TABLE, CREATE VIEW, INSERT INTO ... SELECT, EXECUTE STATEMENT SET, SET)", head.first().copied().unwrap_or("")))),
        }
    }

    fn statement_or_end(&mut self, tokens: &[TokenWithSpan], at: Span) -> Result<(), SqlError> {
        if tokens.is_empty() {
            return Err(SqlError::span(at, "expected INSERT statements after BEGIN"));
        }
        self.statement(tokens)
    }

    fn parse(tokens: &[TokenWithSpan]) -> Result<Statement, SqlError> {
        let start = tokens.first().map_or(Location::new(1, 1), |t| t.span.start);
        let mut p = Parser::new(&FlinkDialect).with_tokens_with_locations(tokens.to_vec());
        p.parse_statement().map_err(|e| SqlError::parser(e, start))
    }

    fn view(&mut self, tokens: &[TokenWithSpan]) -> Result<(), SqlError> {
        let at = tokens[0].span;
        let Statement::CreateView(v) = Self::parse(tokens)? else {
            return Err(SqlError::span(
                at,
                "expected CREATE VIEW name AS SELECT ...",
            ));
        };
        let name = last_name(&v.name);
        if self.tables.contains_key(&name) || self.views.contains_key(&name) {
            return Err(SqlError::span(at, format!("`{name}` is already defined")));
        }
        self.keep_last_ok = dedupe::ranks_at_top(&v.query);
        let stream = self.query(&v.query, &name, None);
        self.keep_last_ok = false;
        let stream = stream?;
        if let Some(keys) = self.keep_last_keys.take() {
            for k in &keys {
                if !stream.columns.iter().any(|c| &c.name == k) {
                    return Err(SqlError::span(at, format!("the versioned view `{name}` must keep its key column `{k}` (the PARTITION BY of its ROW_NUMBER) among its columns")));
                }
            }
            if stream.time.is_none() {
                return Err(SqlError::span(at, format!("the versioned view `{name}` must keep the time attribute its ROW_NUMBER orders by among its columns")));
            }
            self.versioned_views.insert(name.clone(), keys);
        }
        self.views.insert(name, stream);
        Ok(())
    }

    fn insert(&mut self, tokens: &[TokenWithSpan]) -> Result<(), SqlError> {
        let at = tokens[0].span;
        let Statement::Insert(ins) = Self::parse(tokens)? else {
            return Err(SqlError::span(at, "expected INSERT INTO table SELECT ..."));
        };
        let sqlparser::ast::TableObject::TableName(target) = &ins.table else {
            return Err(SqlError::span(at, "INSERT INTO needs a table name"));
        };
        let sink = last_name(target);
        let Some(table) = self.tables.get(&sink) else {
            return Err(SqlError::span(
                at,
                format!("INSERT INTO `{sink}`: no such table (declare it with CREATE TABLE)"),
            ));
        };
        if ins.overwrite {
            return Err(SqlError::span(
                at,
                "INSERT OVERWRITE is not supported: a stream only appends",
            ));
        }
        // A table-shaped sink types its time columns itself from epoch milliseconds: written
        // as integers, no text formatting applies.
        // (A table whose options are wrong is refused where sinks are compiled, below.)
        let epoch_time =
            crate::connectors::sql_sink(table).is_ok_and(|s| s.table().epoch_time_columns());
        let appends =
            crate::connectors::sql_sink(table).is_ok_and(|s| s.table().changelog().is_append());
        let mut columns: Vec<Col> = table
            .columns
            .iter()
            .filter(|c| c.computed.is_none())
            .map(|c| Col {
                name: c.name.clone(),
                ty: match &c.ty {
                    t if epoch_time && t.is_time() => SqlType::Integer,
                    t => t.clone(),
                },
                expr: c.name.clone(),
            })
            .collect();
        if !ins.columns.is_empty() {
            let listed: Vec<String> = ins.columns.iter().map(last_name).collect();
            for name in &listed {
                if !columns.iter().any(|c| &c.name == name) {
                    return Err(SqlError::span(
                        at,
                        format!("table `{sink}` has no column `{name}`"),
                    ));
                }
            }
            columns.retain(|c| listed.contains(&c.name));
            columns.sort_by_key(|c| listed.iter().position(|n| n == &c.name));
        }
        let Some(source) = &ins.source else {
            return Err(SqlError::span(at, "INSERT needs a SELECT"));
        };
        self.inserts += 1;
        let base = format!("insert_{}_{sink}", self.inserts);
        let stream = self.query(source, &base, Some(&columns))?;
        if stream.updating && appends {
            return Err(SqlError::span(at, format!("`{sink}` takes appends only, but this query's result is updating (+I, -U, +U, -D rows: a GROUP BY without a window, an outer join without time bounds, or a join that reads an updating result), which Flink too refuses to write there (\"doesn't support consuming update changes\"): declare `{sink}` with 'format' = 'debezium-json', or write into a 'print' table")));
        }
        self.sinks.entry(sink).or_default().push(stream.name);
        Ok(())
    }

    /// The stream a table or view name reads, writing the table's source the first time.
    fn stream_of(&mut self, name: &str, span: Span) -> Result<Stream, SqlError> {
        if let Some(v) = self.views.get(name) {
            if self.versioned_views.contains_key(name) && !self.reading_versioned {
                return Err(SqlError::span(span, format!("`{name}` is a versioned view (its ROW_NUMBER keeps the last row per key, an updating result): sluice reads it only as the table of a temporal join, `JOIN {name} FOR SYSTEM_TIME AS OF ...`")));
            }
            return Ok(v.clone());
        }
        if let Some((_, s)) = self.sources.get(name) {
            return Ok(s.clone());
        }
        let Some(table) = self.tables.get(name) else {
            return Err(SqlError::span(span, format!("no table or view `{name}`")));
        };
        let time = time::event_time(table)?;
        let source = crate::connectors::sql_source(table, time.as_ref(), self.idle_timeout)?;
        let mut columns = Vec::new();
        for c in &table.columns {
            if let Some(time) = time.as_ref().filter(|time| time.column == c.name) {
                let expr = if time.unit == "s" {
                    format!("({} * 1000)", time.field)
                } else {
                    time.field.clone()
                };
                columns.push(Col {
                    name: c.name.clone(),
                    ty: SqlType::TimestampLtz,
                    expr,
                });
            } else if let Some(e) = &c.computed {
                // A computed column is its expression over the physical columns, wherever it
                // is read (as Flink computes it on read).
                let physical = Stream {
                    name: table.name.clone(),
                    columns: table
                        .columns
                        .iter()
                        .filter(|p| p.computed.is_none())
                        .map(|p| Col {
                            name: p.name.clone(),
                            ty: p.ty.clone(),
                            expr: p.name.clone(),
                        })
                        .collect(),
                    time: None,
                    window: false,
                    updating: false,
                };
                let (expr, ty) = expr::translate(e, &mut query::ColumnScope::new(&physical))?;
                columns.push(Col {
                    name: c.name.clone(),
                    ty,
                    expr: format!("({expr})"),
                });
            } else {
                columns.push(Col {
                    name: c.name.clone(),
                    ty: c.ty.clone(),
                    expr: c.name.clone(),
                });
            }
        }
        let stream = Stream {
            name: table.name.clone(),
            time: time
                .as_ref()
                .and_then(|time| columns.iter().position(|c| c.name == time.column)),
            columns,
            window: false,
            // A changelog table (`'format' = 'debezium-json'`) is an updating input.
            updating: source.table().changelog(),
        };
        self.sources
            .insert(name.to_string(), (source, stream.clone()));
        Ok(stream)
    }

    /// Adds transform `name`, made by the statement being compiled.
    fn push_transform(&mut self, name: &str, table: TransformConfig) {
        self.transforms.push((name.to_string(), table, self.at));
    }

    fn finish(self) -> Result<Compiled, SqlError> {
        // A view named like a part of another (`v_join` beside a view `v` that joins) would give
        // two streams one name.
        let mut names = std::collections::BTreeSet::new();
        let heads = self
            .sources
            .keys()
            .chain(self.transforms.iter().map(|(n, _, _)| n));
        for name in heads {
            if !names.insert(name.clone()) {
                return Err(SqlError::at(
                    Location::new(1, 1),
                    format!("two parts of this job would both be named \"{name}\": a view's or table's name is the name of a part sluice makes for another view or query (`<view>_join`, `<view>_where`, ...); rename it"),
                ));
            }
        }
        let mut this = self;
        this.transforms = prune::share(std::mem::take(&mut this.transforms), &mut this.sinks);
        let this = this;
        let used = prune::used_parts(&this.transforms, this.sinks.values().flatten());
        let mut out = Compiled::default();
        for (name, (source, _)) in &this.sources {
            if this.sinks.contains_key(name) {
                return Err(SqlError::span(
                    this.tables[name].span,
                    format!("table `{name}` is both read and written by this job"),
                ));
            }
            // A table only a view reads, that no INSERT reaches, is not read (as in Flink).
            if used.contains(name.as_str()) {
                let at = this.tables[name].span.start;
                out.origins
                    .insert(("sources", name.clone()), (at.line, at.column));
                out.sources.push((name.clone(), source.clone()));
            }
        }
        for (name, t, at) in &this.transforms {
            if used.contains(name.as_str()) {
                out.origins.insert(("transforms", name.clone()), *at);
                out.transforms.push((name.clone(), t.clone()));
            }
        }
        if this.sinks.is_empty() {
            return Err(SqlError::at(
                Location::new(1, 1),
                "the SQL has no INSERT INTO: nothing would be written",
            ));
        }
        for (name, inputs) in &this.sinks {
            let table = &this.tables[name];
            let mut sink = crate::connectors::sql_sink(table)?;
            *sink.inputs_mut() = inputs.clone();
            let at = table.span.start;
            out.origins
                .insert(("sinks", name.clone()), (at.line, at.column));
            out.sinks.push((name.clone(), sink));
        }
        Ok(out)
    }
}

fn last_name(name: &ObjectName) -> String {
    name.0
        .last()
        .and_then(|p| p.as_ident())
        .map_or_else(|| name.to_string(), |i| i.value.clone())
}
