//! Filters and selects (steps): stateless steps applied to one record where it is read or emitted,
//! before it is keyed.
//!
//! A [`StepChain`] is the compiled steps from a source to one consumer, in order. It reads the
//! raw JSON line (no DOM; fields are found in the bytes), evaluates each filter's condition (a
//! record stays only when it is `true`; `false` and null drop it, as SQL's WHERE) and turns each
//! select into a new JSON object of its fields, in the order written. It owns no state, so it needs
//! nothing in checkpoints, and it never allocates per record beyond the two line buffers it reuses.
//! Each step finds the top-level fields its expressions read in one pass over the line (the
//! sources' JSON field extractor, the crate's one fast scanner) and reads nested paths from the
//! raw line. It knows expressions and JSON bytes, never sinks, shards or windows.

pub mod config;
mod nested;
pub mod plan;

use crate::expr::{self, FieldPath, Program, RawJson, Record, RecordError, Segment, Value};
use crate::plan::{StepKind, StepPlan};
use crate::record::bind::{FEW_FIELDS, MAX_FIELDS};
use crate::record::json::{self, FieldSet, KeyShape, Span, Token, TokenKind};

enum Kind {
    Filter(Program),
    Select(Vec<Field>),
}

/// A select's output field: its name, its JSON key as written before its value (`"name":`,
/// after a comma but for the first, escaped once here instead of for every record), and its
/// expression.
struct Field {
    name: String,
    key: Vec<u8>,
    program: Program,
    /// When the expression is a top-level field the step extracts: its index in `Step::names`.
    slot: Option<usize>,
}

struct Step {
    kind: Kind,
    /// Top-level fields the expressions read (or step into), found in one pass (empty when more
    /// than [`MAX_FIELDS`]: then every read scans the line).
    names: Vec<String>,
    fields: FieldSet,
    /// The key order of the last record this step read (select steps write the same keys in the
    /// same order on every record, and sources usually do).
    shape: KeyShape,
    /// Nested paths the expressions read: (path, its top-level field's index in `names`, the rest
    /// of the path), walked inside that field's token rather than from the line's start.
    nested: Vec<(FieldPath, usize, FieldPath)>,
    /// The objects those paths go one key into, each read in one pass (`nested`).
    objects: nested::Objects,
}

impl Step {
    fn new(kind: Kind) -> Step {
        let programs: Vec<&Program> = match &kind {
            Kind::Filter(p) => vec![p],
            Kind::Select(f) => f.iter().map(|f| &f.program).collect(),
        };
        let mut names: Vec<String> = Vec::new();
        for path in programs.iter().flat_map(|p| p.fields()) {
            if let Some(Segment::Key(k)) = path.segments().first() {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
        }
        if names.len() > MAX_FIELDS {
            names.clear();
        }
        let mut nested = Vec::new();
        for path in programs.iter().flat_map(|p| p.fields()) {
            let (Some(Segment::Key(k)), rest) = (path.segments().first(), &path.segments()[1..])
            else {
                continue;
            };
            let Some(i) = names.iter().position(|n| n == k) else {
                continue;
            };
            // A rest that starts with a key is a path of its own; one that starts with an index
            // (`items[0]`) is read from the line.
            if let Some(rest) = FieldPath::new(rest.to_vec()) {
                if !nested.iter().any(|(p, _, _)| p == path) {
                    nested.push((path.clone(), i, rest));
                }
            }
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut kind = kind;
        if let Kind::Select(fields) = &mut kind {
            for f in fields {
                f.slot = match f.program.as_field().map(FieldPath::segments) {
                    Some([Segment::Key(k)]) => names.iter().position(|n| n == k),
                    _ => None,
                };
            }
        }
        Step {
            kind,
            fields: FieldSet::new(&refs),
            shape: KeyShape::new(),
            names,
            objects: nested::Objects::new(&nested),
            nested,
        }
    }
}

/// A line whose top-level fields were found in one pass: reads of those are a token parse, other
/// paths scan the line.
struct Extracted<'a, 't> {
    line: RawJson<'a>,
    names: &'t [String],
    toks: &'t [Option<Token<'a>>],
    nested: &'t [(FieldPath, usize, FieldPath)],
    /// Per nested path, its (object, token) in `inner`, where its object was read in one pass.
    slots: &'t [Option<(usize, usize)>],
    inner: &'t [Option<Token<'a>>],
    /// Which objects `inner` holds the keys of.
    read: u64,
}

impl<'a> Extracted<'a, '_> {
    /// Nested path `k`'s token as its object's one-pass read found it (`Some(None)`: the object
    /// has no such key); `None` where that read did not answer.
    fn inner(&self, k: usize) -> Option<Option<Token<'a>>> {
        let (o, i) = self.slots.get(k).copied().flatten()?;
        (self.read & (1 << o) != 0).then(|| self.inner.get(i).copied().flatten())
    }
}

impl Record for Extracted<'_, '_> {
    fn get(&self, path: &FieldPath) -> Result<Value<'_>, RecordError> {
        if let [Segment::Key(k)] = path.segments() {
            if let Some(i) = self.names.iter().position(|n| n == k) {
                return match self.toks[i] {
                    None => Ok(Value::Null),
                    Some(t) => expr::scalar_token(t.raw),
                };
            }
        }
        if let Some(k) = self.nested.iter().position(|(p, _, _)| p == path) {
            if let Some(t) = self.inner(k) {
                return t.map_or(Ok(Value::Null), |t| expr::scalar_token(t.raw));
            }
            let (_, i, rest) = &self.nested[k];
            // Inside the field's own token: the rest of the line is not scanned again.
            return match self.toks.get(*i).copied().flatten() {
                None => Ok(Value::Null),
                Some(t) => RawJson(t.raw).value_at(rest),
            };
        }
        self.line.get(path)
    }
}

impl<'a> Extracted<'a, '_> {
    /// The raw bytes of the value at `path` (`None`: missing), found like [`Record::get`] finds it.
    fn token(&self, path: &FieldPath) -> Result<Option<&'a [u8]>, RecordError> {
        if let [Segment::Key(k)] = path.segments() {
            if let Some(i) = self.names.iter().position(|n| n == k) {
                return Ok(self.toks[i].map(|t| t.raw));
            }
        }
        if let Some(k) = self.nested.iter().position(|(p, _, _)| p == path) {
            if let Some(t) = self.inner(k) {
                return Ok(t.map(|t| t.raw));
            }
            let (_, i, rest) = &self.nested[k];
            return match self.toks.get(*i).copied().flatten() {
                None => Ok(None),
                Some(t) => RawJson(t.raw).token_at(rest),
            };
        }
        self.line.token_at(path)
    }
}

/// Writes a selected field's value from its raw token when that gives exactly the bytes
/// evaluating it and writing the value would (`null`, `true`, `false`, a string without escapes or
/// control characters, an integer that fits i64 and is not `-0`); false, writing nothing, for any
/// other token (decimals are normalised, escapes re-written, objects refused), which then takes
/// the general path. A select of plain fields, the usual reshaping, so copies tokens.
fn write_plain(token: Option<&[u8]>, out: &mut Vec<u8>) -> bool {
    let Some(t) = token else {
        out.extend_from_slice(b"null");
        return true;
    };
    let plain = match t.first() {
        Some(b'"') => {
            t.len() >= 2
                && t.ends_with(b"\"")
                && !t[1..t.len() - 1]
                    .iter()
                    .any(|&b| b == b'\\' || b == b'"' || b < 0x20)
                && std::str::from_utf8(t).is_ok()
        }
        Some(b'-' | b'0'..=b'9') => {
            let digits = t.strip_prefix(b"-").unwrap_or(t);
            !digits.is_empty()
                && digits.len() <= 18
                && digits.iter().all(u8::is_ascii_digit)
                && (digits[0] != b'0' || (digits.len() == 1 && t.len() == 1))
        }
        _ => matches!(t, b"null" | b"true" | b"false"),
    };
    if plain {
        out.extend_from_slice(t);
    }
    plain
}

/// [`write_plain`] for a token [`json::extract`] found: that scan already checked a string's
/// bytes (valid UTF-8, no control characters) and saw whether it has escapes, so a string is
/// copied without looking at it again.
#[inline]
fn write_extracted(token: Option<Token<'_>>, out: &mut Vec<u8>) -> bool {
    match token {
        Some(t) if t.kind == TokenKind::String => {
            if !t.has_escape {
                out.extend_from_slice(t.raw);
            }
            !t.has_escape
        }
        t => write_plain(t.map(|t| t.raw), out),
    }
}

/// Writes `sql_timestamp(field)` (every SQL TIMESTAMP column a query writes) from the field's
/// integer token, without the general path's allocations; false, writing nothing, for any other
/// expression or token, which then takes the general path.
fn write_timestamp(p: &Program, rec: &Extracted<'_, '_>, out: &mut Vec<u8>) -> bool {
    let Some(f) = p.as_sql_timestamp_of_field() else {
        return false;
    };
    match rec.token(f) {
        Ok(Some(t)) => match expr::scalar_token(t) {
            Ok(Value::Int(ts)) => expr::write_sql_timestamp(ts, out),
            _ => false,
        },
        _ => false,
    }
}

/// What became of a record.
pub enum Outcome<'a> {
    /// The record after the last step: the input line itself when no select reshaped it.
    Kept(&'a [u8]),
    /// A filter dropped it.
    Dropped,
}

/// The steps from a source to one consumer.
pub struct StepChain {
    steps: Vec<(String, Step)>,
    bufs: [Vec<u8>; 2],
    /// Per field the first step reads: its index in the tokens the source's parser keeps
    /// ([`StepChain::read_first_from`]).
    first_from: Option<Vec<usize>>,
}

impl StepChain {
    /// Compiles `chain` (stage ids into `stages`, in order). The plan compiled every expression
    /// already, so an error here is a bug in the plan builder, reported as such.
    pub fn new(stages: &[StepPlan], chain: &[usize]) -> Result<StepChain, String> {
        let compile = |text: &str, stage: &str| {
            expr::compile(text).map_err(|e| format!("`{stage}`: invalid expression: {e}"))
        };
        let mut steps = Vec::with_capacity(chain.len());
        for &id in chain {
            let s = &stages[id];
            let kind = match &s.kind {
                StepKind::Filter { condition } => Kind::Filter(compile(condition, &s.name)?),
                StepKind::Select { fields } => Kind::Select(
                    fields
                        .iter()
                        .enumerate()
                        .map(|(i, (n, t))| {
                            let mut key = if i > 0 { vec![b','] } else { Vec::new() };
                            expr::write_json_string(n, &mut key);
                            key.push(b':');
                            Ok(Field {
                                name: n.clone(),
                                key,
                                program: compile(t, &s.name)?,
                                slot: None,
                            })
                        })
                        .collect::<Result<_, String>>()?,
                ),
            };
            steps.push((s.name.clone(), Step::new(kind)));
        }
        Ok(StepChain {
            steps,
            bufs: [Vec::new(), Vec::new()],
            first_from: None,
        })
    }

    /// The top-level fields the first step reads, when it reads any.
    pub fn first_fields(&self) -> Option<&[String]> {
        let (_, first) = self.steps.first()?;
        (!first.names.is_empty()).then_some(&first.names[..])
    }

    /// The first step takes its fields from the tokens the source's parser kept for the same
    /// line (`map[i]`: the index there of [`StepChain::first_fields`]`[i]`) instead of
    /// scanning the line again, whenever [`StepChain::apply`] is given them.
    pub fn read_first_from(&mut self, map: Vec<usize>) {
        self.first_from = Some(map);
    }

    /// Runs `line` through every step. `kept`: where the source's parser found the fields of
    /// this same line (see [`StepChain::read_first_from`]). `Err` is the dead-letter reason:
    /// which stage and field, the expression, the column and why (a type error, an overflow, a
    /// malformed record).
    pub fn apply<'a>(
        &'a mut self,
        line: &'a [u8],
        kept: Option<&[Option<Span>]>,
    ) -> Result<Outcome<'a>, String> {
        // Which buffer holds the current record (None: the input line).
        let mut cur: Option<usize> = None;
        let mut kept = self.first_from.as_deref().zip(kept);
        for (name, step) in &mut self.steps {
            let [a, b] = &mut self.bufs;
            let (input, out): (&[u8], &mut Vec<u8>) = match cur {
                None => (line, a),
                Some(0) => (a.as_slice(), b),
                Some(_) => (b.as_slice(), a),
            };
            // Cleared per record: a small array for the usual few fields (see `bind::FEW_FIELDS`).
            let n = step.names.len();
            let mut few: [Option<Token<'_>>; FEW_FIELDS] = [None; FEW_FIELDS];
            let mut many: [Option<Token<'_>>; MAX_FIELDS];
            let toks = if n <= FEW_FIELDS {
                &mut few[..n]
            } else {
                many = [None; MAX_FIELDS];
                &mut many[..n]
            };
            if let Some((map, spans)) = kept.take() {
                // The first step, on the source's line, which that parser already validated.
                for (t, &j) in toks.iter_mut().zip(map) {
                    *t = spans.get(j).copied().flatten().and_then(|s| s.token(input));
                }
            } else if !step.names.is_empty() {
                json::extract_shaped(input, &step.fields, &mut step.shape, toks)
                    .map_err(|e| format!("`{name}`: the record is not valid JSON: {e}"))?;
            }
            let m = step.objects.total;
            let mut few_inner: [Option<Token<'_>>; FEW_FIELDS] = [None; FEW_FIELDS];
            let mut many_inner: [Option<Token<'_>>; MAX_FIELDS];
            let inner = if m <= FEW_FIELDS {
                &mut few_inner[..m]
            } else {
                many_inner = [None; MAX_FIELDS];
                &mut many_inner[..m]
            };
            let read = if m > 0 {
                step.objects.extract(toks, inner)
            } else {
                0
            };
            let rec = Extracted {
                line: RawJson(input),
                names: &step.names,
                toks,
                nested: &step.nested,
                slots: &step.objects.slots,
                inner,
                read,
            };
            match &step.kind {
                Kind::Filter(p) => {
                    let v = p.eval(&rec).map_err(|e| reason("filter", name, None, &e))?;
                    if !expr::is_true(&v) {
                        return Ok(Outcome::Dropped);
                    }
                }
                Kind::Select(fields) => {
                    out.clear();
                    out.push(b'{');
                    for Field {
                        name: field,
                        key,
                        program: p,
                        slot,
                    } in fields
                    {
                        out.extend_from_slice(key);
                        let plain = match slot {
                            Some(i) => write_extracted(toks[*i], out),
                            None => p
                                .as_field()
                                .and_then(|f| rec.token(f).ok())
                                .is_some_and(|t| write_plain(t, out)),
                        };
                        if plain || write_timestamp(p, &rec, out) {
                            continue;
                        }
                        let v = p
                            .eval(&rec)
                            .map_err(|e| reason("select", name, Some(field), &e))?;
                        v.write_json(out);
                    }
                    out.push(b'}');
                    cur = Some(match cur {
                        None | Some(1) => 0,
                        Some(_) => 1,
                    });
                }
            }
        }
        Ok(Outcome::Kept(match cur {
            None => line,
            Some(i) => &self.bufs[i],
        }))
    }
}

/// One line for the dead-letter output: `select `priced`, field `usd`: `amount * rate` at column
/// 8: <why> (in field `amount`)`.
fn reason(kind: &str, stage: &str, field: Option<&str>, e: &expr::EvalError) -> String {
    let out_field = field.map_or(String::new(), |f| format!(", field `{f}`"));
    let in_field = e
        .field()
        .map_or(String::new(), |f| format!(" (in field `{f}`)"));
    format!(
        "{kind} `{stage}`{out_field}: `{}` at column {}: {}{in_field}",
        e.text(),
        e.column(),
        e.reason()
    )
}

#[cfg(test)]
mod nested_tests;
#[cfg(test)]
mod tests;
