//! Aggregates whose result is one of the group's input values as written: `first_value`,
//! `last_value` (Flink's FIRST_VALUE/LAST_VALUE) and `min_string`/`max_string` (Flink's MIN/MAX
//! of a STRING). They keep JSON tokens, not numbers, so they live beside the accumulator words:
//! the group aggregate reads each record's row (the port carries it) and appends these fields to
//! the rendered row.
//!
//! Semantics (Flink's `FirstValueAggFunction`, `LastValueAggFunction`, `Min/MaxAggFunction` and
//! their `WithRetract` forms): NULL and absent values are ignored; a group without a non-NULL
//! value shows NULL. Over an append-only input one token per group and aggregate is kept (the
//! first, the last, the least or the greatest). Over an updating input every value is kept:
//! first/last as the values in arrival order, a retraction taking back the earliest equal value
//! (Flink's `retract` removes the value's first order); min/max as the distinct values in order with their row
//! counts. Strings compare by their characters (UTF-8 byte order, which is code point order;
//! Java's UTF-16 order differs only between characters above U+FFFF and U+E000..U+FFFF);
//! `false < true`; other values compare by their JSON text.

use std::cmp::Ordering;

use crate::checkpoint::codec::{Dec, Enc};
use crate::operators::window::acc_table::AccTable;
use crate::record::json::{self, FieldSet, Token, TokenKind};

/// The value aggregates, as a user writes them (only in a group aggregate).
pub const VALUE_FUNCTIONS: [&str; 4] = ["first_value", "last_value", "min_string", "max_string"];

/// Most distinct fields the value aggregates of one group aggregate read (a stack buffer per
/// record holds their tokens).
pub const MAX_VALUE_FIELDS: usize = 16;

/// Which of the group's values an aggregate shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    First,
    Last,
    Min,
    Max,
}

impl Pick {
    /// Whether the shown value is the held list's last (else its first).
    fn last(self) -> bool {
        matches!(self, Pick::Last | Pick::Max)
    }

    fn ordered(self) -> bool {
        matches!(self, Pick::Min | Pick::Max)
    }

    /// The aggregate's name in a job (one of [`VALUE_FUNCTIONS`]).
    pub fn function(self) -> &'static str {
        match self {
            Pick::First => VALUE_FUNCTIONS[0],
            Pick::Last => VALUE_FUNCTIONS[1],
            Pick::Min => VALUE_FUNCTIONS[2],
            Pick::Max => VALUE_FUNCTIONS[3],
        }
    }
}

/// One value aggregate of a plan: its output name, what it shows, and the top-level field read.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueAggPlan {
    pub name: String,
    pub pick: Pick,
    pub field: String,
}

/// `first_value(f)` and the others: `None` when `expr` calls none of them, else the pick and the
/// field, or what is wrong.
pub fn parse(expr: &str) -> Option<Result<(Pick, String), String>> {
    let (func, rest) = expr.trim().split_once('(')?;
    let pick = match func.trim() {
        "first_value" => Pick::First,
        "last_value" => Pick::Last,
        "min_string" => Pick::Min,
        "max_string" => Pick::Max,
        _ => return None,
    };
    let Some(arg) = rest.strip_suffix(')').map(str::trim) else {
        return Some(Err(format!(
            "`{expr}` is not an aggregate: expected `{}(field)`",
            func.trim()
        )));
    };
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    Some(if plain {
        Ok((pick, arg.to_string()))
    } else {
        Err(format!("`{}` takes one top-level field name in `{expr}` (a nested path or an expression is not supported: compute it in a select first)", func.trim()))
    })
}

/// A group's held values of one aggregate: (arrival order or row count, canonical JSON token).
type Held = Vec<(u64, Vec<u8>)>;

/// The value aggregates of one group aggregate, and every group's values.
#[derive(Debug)]
pub struct ValueAggs {
    /// (`"name":`, the field's slot in `fields`, pick) per aggregate, in plan order.
    specs: Vec<(Vec<u8>, usize, Pick)>,
    fields: FieldSet,
    /// The input updates: keep every value so that one can be taken back.
    retracts: bool,
    /// By aggregate, then group row.
    held: Vec<Vec<Held>>,
    /// Arrival order of the next value (first/last over an updating input).
    seq: u64,
    canon: Vec<u8>,
}

impl ValueAggs {
    pub fn new(plans: &[ValueAggPlan], retracts: bool) -> ValueAggs {
        let mut names: Vec<&str> = Vec::new();
        let specs = plans
            .iter()
            .map(|p| {
                let slot = names.iter().position(|n| *n == p.field).unwrap_or_else(|| {
                    names.push(&p.field);
                    names.len() - 1
                });
                let mut prefix = serde_json::to_vec(&p.name).unwrap_or_else(|_| b"\"?\"".to_vec());
                prefix.push(b':');
                (prefix, slot, p.pick)
            })
            .collect();
        ValueAggs {
            specs,
            fields: FieldSet::new(&names),
            retracts,
            held: vec![Vec::new(); plans.len()],
            seq: 0,
            canon: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Adds (or, `back`, takes back) the values of record row `row` in group row `r`.
    pub fn apply(&mut self, r: usize, row: &[u8], back: bool) {
        let mut toks: [Option<Token<'_>>; MAX_VALUE_FIELDS] = [None; MAX_VALUE_FIELDS];
        let n = self.fields.len().min(MAX_VALUE_FIELDS);
        // The row was validated where it was read; one that does not scan adds nothing.
        if json::extract(row, &self.fields, &mut toks[..n]).is_err() {
            return;
        }
        for s in 0..self.specs.len() {
            let (_, slot, pick) = self.specs[s];
            let Some(tok) = toks.get(slot).copied().flatten() else {
                continue;
            };
            if tok.kind == TokenKind::Null {
                continue;
            }
            let value = match tok.has_escape {
                true => match json::canonical(&tok, &mut self.canon) {
                    Ok(c) => c.to_vec(),
                    Err(_) => continue,
                },
                false => tok.raw.to_vec(),
            };
            let held = &mut self.held[s];
            if held.len() <= r {
                held.resize_with(r + 1, Vec::new);
            }
            let values = &mut held[r];
            match (self.retracts, pick.ordered()) {
                (false, _) => keep_one(values, value, pick),
                (true, false) if back => {
                    if let Some(i) = values.iter().position(|(_, v)| *v == value) {
                        values.remove(i);
                    }
                }
                (true, false) => {
                    values.push((self.seq, value));
                    self.seq += 1;
                }
                (true, true) => count(values, value, back),
            }
        }
    }

    /// Forgets group row `r`'s values (its rows were all taken back).
    pub fn clear(&mut self, r: usize) {
        for held in &mut self.held {
            if let Some(v) = held.get_mut(r) {
                *v = Vec::new();
            }
        }
    }

    /// Appends `,"name":value` for each aggregate of group row `r` to the row `out`, which ends
    /// with `}\n`.
    pub fn write_fields(&self, r: usize, out: &mut Vec<u8>) {
        if out.ends_with(b"}\n") {
            out.truncate(out.len() - 2);
        }
        for (s, (prefix, _, pick)) in self.specs.iter().enumerate() {
            if out.last() != Some(&b'{') {
                out.push(b',');
            }
            out.extend_from_slice(prefix);
            let values = self.held[s].get(r);
            let shown = values.and_then(|v| if pick.last() { v.last() } else { v.first() });
            match shown {
                Some((_, v)) => out.extend_from_slice(v),
                None => out.extend_from_slice(b"null"),
            }
        }
        out.extend_from_slice(b"}\n");
    }

    /// Values held, for the state size.
    pub fn bytes(&self) -> usize {
        let each = |h: &Held| {
            std::mem::size_of::<Held>()
                + h.iter()
                    .map(|(_, v)| std::mem::size_of::<(u64, Vec<u8>)>() + v.capacity())
                    .sum::<usize>()
        };
        self.held.iter().flatten().map(each).sum()
    }

    /// Every group's values by its key (hash and bytes, from `table`), so a restore onto
    /// another shard count finds each group's row again.
    pub fn encode(&self, table: &AccTable, e: &mut Enc) {
        e.u64(self.seq);
        let held = |s: usize, r: usize| self.held[s].get(r).filter(|v| !v.is_empty());
        let n = (0..self.specs.len())
            .map(|s| self.held[s].iter().filter(|v| !v.is_empty()).count())
            .sum::<usize>();
        e.u64(n as u64);
        for (r, row) in table.rows().enumerate() {
            for s in 0..self.specs.len() {
                let Some(values) = held(s, r) else { continue };
                e.u64(row.hash);
                e.bytes(row.key());
                e.u64(s as u64);
                e.u64(values.len() as u64);
                for (n, v) in values {
                    e.u64(*n);
                    e.bytes(v);
                }
            }
        }
    }

    /// Reads what [`ValueAggs::encode`] wrote, for the groups `keep` accepts; `row` finds (or
    /// makes) a group's row by its hash and key.
    pub fn decode(
        &mut self,
        d: &mut Dec,
        keep: &dyn Fn(u64) -> bool,
        row: &mut dyn FnMut(u64, &[u8]) -> usize,
    ) -> Result<(), String> {
        self.seq = self.seq.max(d.u64("value aggregates' order")?);
        let n = d.count(24, "value aggregate groups")?;
        for _ in 0..n {
            let hash = d.u64("group hash")?;
            let key = d.bytes("group key")?;
            let s = d.u64("value aggregate")? as usize;
            if s >= self.specs.len() {
                return Err(format!("value aggregate {s} of {}", self.specs.len()));
            }
            let m = d.count(16, "held values")?;
            let mut values = Vec::with_capacity(m);
            for _ in 0..m {
                let n = d.u64("order or row count")?;
                values.push((n, d.bytes("held value")?.to_vec()));
            }
            if !keep(hash) {
                continue;
            }
            let r = row(hash, key);
            let held = &mut self.held[s];
            if held.len() <= r {
                held.resize_with(r + 1, Vec::new);
            }
            if !held[r].is_empty() {
                return Err("a group's held values appear twice".into());
            }
            held[r] = values;
        }
        Ok(())
    }
}

/// Append-only input: the one value `pick` shows, replaced by `value` where it wins.
fn keep_one(values: &mut Held, value: Vec<u8>, pick: Pick) {
    let wins = match (values.first(), pick) {
        (None, _) => true,
        (Some(_), Pick::First) => false,
        (Some(_), Pick::Last) => true,
        (Some((_, v)), Pick::Min) => order(&value, v) == Ordering::Less,
        (Some((_, v)), Pick::Max) => order(&value, v) == Ordering::Greater,
    };
    if wins {
        values.clear();
        values.push((1, value));
    }
}

/// Updating input, min/max: `value` counted into (or out of) the sorted distinct values.
fn count(values: &mut Held, value: Vec<u8>, back: bool) {
    match (values.binary_search_by(|(_, v)| order(v, &value)), back) {
        (Ok(i), false) => values[i].0 += 1,
        (Err(i), false) => values.insert(i, (1, value)),
        (Ok(i), true) => {
            values[i].0 -= 1;
            if values[i].0 == 0 {
                values.remove(i);
            }
        }
        // A value never added: nothing to take back.
        (Err(_), true) => {}
    }
}

/// The order of two canonical JSON tokens: strings by their characters, others by their text.
pub(crate) fn order(a: &[u8], b: &[u8]) -> Ordering {
    let string = |t: &[u8]| t.len() >= 2 && t[0] == b'"';
    if !(string(a) && string(b)) {
        return a.cmp(b);
    }
    let (ia, ib) = (&a[1..a.len() - 1], &b[1..b.len() - 1]);
    if !ia.contains(&b'\\') && !ib.contains(&b'\\') {
        return ia.cmp(ib);
    }
    match (json::unescape(a), json::unescape(b)) {
        (Ok(x), Ok(y)) => x.as_bytes().cmp(y.as_bytes()),
        _ => a.cmp(b),
    }
}
