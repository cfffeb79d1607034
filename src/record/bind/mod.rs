//! Binding a record to the events its consumers need: the record model.
//!
//! A [`Binding`] says, for one operator input port fed by a stream, which field paths form the
//! key, which go to value slots, and whether the event carries the record itself. The parser finds
//! only those fields (plus the event time) and builds one [`Event`] per binding, with a payload
//! when the key is long, a value is wide or the row is wanted. It is used where records are read
//! (sources) and where operators emit them (derived streams). Anything it cannot interpret is a
//! [`Malformed`] reason for the dead-letter output; nothing is guessed.
//!
//! The record model:
//! - Paths: `a` is a top-level field (found in one pass over the line with the rest), `a.b.c`
//!   steps into objects (the top-level token is scanned again for each step). A step into
//!   something that is not an object, or a missing field, is null.
//! - Keys: each field's canonical JSON token (a string stays a string, a number a number), fields
//!   separated by a 0 byte; any length. A missing or null key field writes `null` and marks the
//!   event [`NULL_KEY`]: a window groups such events under the NULL group, joins and dedupe never
//!   match them (SQL NULL).
//! - Numbers: an integer that fits `i64` is an integer; any other number is the exact decimal it
//!   spells (`1.2345`, `2.50` keeps its scale), or a float only when no 28-digit decimal holds it.
//!   Hashed for `count_distinct`, a number is hashed by value (`2.5` and `2.50` are one value).

use super::json::{self, FieldSet, KeyShape, Number, Span, Token, TokenKind};
use crate::record::event::{hash_key, Event, PayloadBuf, Value, NULL_KEY};
use crate::record::path::{FieldPath, Segment};
use rust_decimal::Decimal;

/// How a port's value slots are read from a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotUse {
    /// A JSON number (or null) for sum/min/max/avg.
    Number,
    /// Any JSON value, hashed, for count_distinct.
    Hash,
}

/// How a record's event-time field is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Millis,
    Seconds,
    Micros,
    Rfc3339,
}

/// The time of a record from a source without event time: the watermark's own "no time yet"
/// (`time::WM_MIN`), so such a record is never behind any watermark.
pub const NO_EVENT_TIME: i64 = i64::MIN;

/// Largest accepted |event time| in ms (about year 33658): keeps window arithmetic far from overflow.
pub const MAX_ABS_EVENT_TIME_MS: i64 = 1_000_000_000_000_000;
/// Distinct top-level fields found on the stack in one pass; more are found through a heap buffer.
pub const MAX_FIELDS: usize = 64;
/// Fields a record of the usual shape needs (time, key, a few values): the smallest stack tier.
pub const FEW_FIELDS: usize = 8;

#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub port: u16,
    /// Key fields, in order.
    pub key: Vec<FieldPath>,
    /// Value slots: slot i is `values[i]`.
    pub values: Vec<(FieldPath, SlotUse)>,
    /// The event carries the record (trimmed) as its row.
    pub row: bool,
}

/// Why a record went to the dead-letter output.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed(pub String);

/// A path compiled against the parser's top-level fields.
struct Path {
    text: String,
    top: usize,
    /// One one-name field set per further object step.
    rest: Vec<FieldSet>,
}

struct CompiledBinding {
    port: u16,
    key: Vec<usize>,
    values: Vec<(usize, SlotUse)>,
    row: bool,
}

pub struct RecordParser {
    fields: FieldSet,
    /// The keys of the last line, matched by their bytes in the next one (`json::KeyShape`).
    shape: KeyShape,
    names: Vec<String>,
    ts_field: usize,
    /// False for records past a filter or select, or emitted by an operator: their event time is
    /// given to [`RecordParser::parse_at`].
    with_time: bool,
    /// The source's records have no event time: each gets [`NO_EVENT_TIME`].
    no_time: bool,
    unit: TimeUnit,
    /// Clock-skew guard: event times below `min_ts` or above `max_ts` are dead letters.
    min_ts: i64,
    max_ts: i64,
    /// How far ahead of the wall clock an event may be (`max_ts` = clock + this).
    max_future_ms: Option<i64>,
    paths: Vec<Path>,
    bindings: Vec<CompiledBinding>,
    key: Vec<u8>,
    canon: Vec<u8>,
    /// The events of the last parse, one per binding, and their payloads.
    pub events: Vec<Event>,
    pub payloads: Vec<PayloadBuf>,
    /// Where each field of the last record parsed lies, when filters or selects on this source
    /// read them ([`RecordParser::keep_fields`]).
    kept: Option<Vec<Option<Span>>>,
    /// For a route's parser that binds the source's own line: per slot, the index of that field
    /// in the source parser's kept spans ([`RecordParser::read_from_kept`]).
    from_kept: Option<Vec<Option<usize>>>,
    /// The changelog kind's flags stamped on the events of the next parses (`+I`: none): set by
    /// a changelog source for each row it decodes.
    pub kind_flags: u8,
}

/// Runs `f` on `n` cleared token slots. Every slot is cleared per record, so the common few
/// fields get a small array: clearing all 64 slots (1.5 KB) cost more than finding the fields.
#[inline(always)]
fn with_tokens<'a, R>(n: usize, f: impl FnOnce(&mut [Option<Token<'a>>]) -> R) -> R {
    if n <= FEW_FIELDS {
        let mut toks: [Option<Token<'a>>; FEW_FIELDS] = [None; FEW_FIELDS];
        f(&mut toks[..n])
    } else if n <= MAX_FIELDS {
        let mut toks: [Option<Token<'a>>; MAX_FIELDS] = [None; MAX_FIELDS];
        f(&mut toks[..n])
    } else {
        f(&mut vec![None; n])
    }
}

/// Index of `n` in `names`, added if new.
fn index_of(names: &mut Vec<String>, n: &str) -> usize {
    match names.iter().position(|x| x == n) {
        Some(i) => i,
        None => {
            names.push(n.to_string());
            names.len() - 1
        }
    }
}

impl RecordParser {
    /// `Err` says what cannot be bound; checked before any thread starts.
    pub fn new(ts_field: &str, unit: TimeUnit, bindings: &[Binding]) -> Result<Self, String> {
        let mut names: Vec<String> = vec![ts_field.to_string()];
        let mut paths: Vec<Path> = Vec::new();
        let mut path_of = |p: &FieldPath, names: &mut Vec<String>| -> Result<usize, String> {
            if let Some(i) = paths.iter().position(|x| x.text == p.as_str()) {
                return Ok(i);
            }
            let mut segs = p.segments().iter();
            let Some(Segment::Key(first)) = segs.next() else {
                return Err(format!("`{p}` does not start with a field name"));
            };
            let top = index_of(names, first);
            let mut rest = Vec::new();
            for s in segs {
                match s {
                    Segment::Key(k) => rest.push(FieldSet::new(&[k.as_str()])),
                    Segment::Index(_) => {
                        return Err(format!(
                            "`{p}`: array indexes are not supported in keys and aggregate inputs; a select can take the element out first"
                        ))
                    }
                }
            }
            paths.push(Path {
                text: p.as_str().to_string(),
                top,
                rest,
            });
            Ok(paths.len() - 1)
        };
        let mut compiled = Vec::new();
        for b in bindings {
            let key = b
                .key
                .iter()
                .map(|p| path_of(p, &mut names))
                .collect::<Result<_, _>>()?;
            let values = b
                .values
                .iter()
                .map(|(p, u)| Ok((path_of(p, &mut names)?, *u)))
                .collect::<Result<_, String>>()?;
            compiled.push(CompiledBinding {
                port: b.port,
                key,
                values,
                row: b.row,
            });
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        Ok(RecordParser {
            fields: FieldSet::new(&refs),
            shape: KeyShape::new(),
            names,
            ts_field: 0,
            with_time: true,
            no_time: false,
            unit,
            min_ts: -MAX_ABS_EVENT_TIME_MS,
            max_ts: MAX_ABS_EVENT_TIME_MS,
            max_future_ms: None,
            paths,
            events: vec![Event::EMPTY; compiled.len()],
            payloads: (0..compiled.len()).map(|_| PayloadBuf::default()).collect(),
            bindings: compiled,
            key: Vec::with_capacity(64),
            canon: Vec::with_capacity(64),
            kept: None,
            from_kept: None,
            kind_flags: 0,
        })
    }

    /// Also finds `wanted` in every record and keeps where they lie ([`RecordParser::kept`]), so
    /// a filter or select reading them needs no pass of its own over the line. Returns each
    /// wanted name's index into `kept`; `None` (nothing changed) when that would take this
    /// parser past the small per-record token array ([`FEW_FIELDS`]).
    pub fn keep_fields(&mut self, wanted: &[String]) -> Option<Vec<usize>> {
        let mut names = self.names.clone();
        let map: Vec<usize> = wanted.iter().map(|n| index_of(&mut names, n)).collect();
        let tier = |n: usize| if n <= FEW_FIELDS { 0 } else { 1 };
        if names.len() > MAX_FIELDS || tier(names.len()) > tier(self.names.len()) {
            return None;
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        self.fields = FieldSet::new(&refs);
        self.shape.reset();
        self.kept = Some(vec![None; names.len()]);
        self.names = names;
        Some(map)
    }

    /// Where the fields of the last record parsed lie (see [`RecordParser::keep_fields`]).
    pub fn kept(&self) -> Option<&[Option<Span>]> {
        self.kept.as_deref()
    }

    /// The slot of the event-time field when the time is given instead (a keyed parser).
    fn given_time_slot(&self) -> Option<usize> {
        (!self.with_time || self.no_time).then_some(self.ts_field)
    }

    /// The top-level fields this parser finds, but its event time when that is given.
    pub fn top_fields(&self) -> Vec<String> {
        let time = self.given_time_slot();
        let names = self.names.iter().enumerate();
        names
            .filter(|&(i, _)| Some(i) != time)
            .map(|(_, n)| n.clone())
            .collect()
    }

    /// Binds from the spans another parser keeps for the same line ([`RecordParser::parse_kept`]):
    /// `map[i]` is the index there of [`RecordParser::top_fields`]`[i]`.
    pub fn read_from_kept(&mut self, map: &[usize]) {
        if self.names.len() > MAX_FIELDS {
            return;
        }
        let time = self.given_time_slot();
        let mut at = map.iter();
        let slots = (0..self.names.len()).map(|i| {
            if Some(i) == time {
                None
            } else {
                at.next().copied()
            }
        });
        self.from_kept = Some(slots.collect());
    }

    /// [`RecordParser::parse_at`] of the line another parser just parsed, found in its `kept`
    /// spans when [`RecordParser::read_from_kept`] was set up (no second scan of the line).
    #[inline]
    pub fn parse_kept(
        &mut self,
        line: &[u8],
        kept: Option<&[Option<Span>]>,
        ts: i64,
    ) -> Result<(), Malformed> {
        let (Some(spans), Some(map)) = (kept, self.from_kept.take()) else {
            return self.parse_at(line, ts);
        };
        let bound = with_tokens(map.len(), |toks| {
            for (t, j) in toks.iter_mut().zip(&map) {
                *t = j
                    .and_then(|j| spans.get(j).copied().flatten())
                    .and_then(|s| s.token(line));
            }
            self.bind_all(line, ts, toks)
        });
        self.from_kept = Some(map);
        bound
    }

    /// A parser for a source whose records have no event time (a table without a WATERMARK):
    /// each record gets [`NO_EVENT_TIME`], which holds its partitions' watermark at the start
    /// until they end, so nothing downstream of it is ever late.
    pub fn untimed(bindings: &[Binding]) -> Result<Self, String> {
        let mut p = RecordParser::new("\u{0}no event time", TimeUnit::Millis, bindings)?;
        p.no_time = true;
        Ok(p)
    }

    /// A parser for records that carry no event time of their own (a select's output, an
    /// operator's output): key, values and row only, the time given by the caller.
    pub fn keyed(bindings: &[Binding]) -> Result<Self, String> {
        // A field name no JSON key can be (the time slot stays, unused).
        let mut p = RecordParser::new("\u{0}no event time", TimeUnit::Millis, bindings)?;
        p.with_time = false;
        Ok(p)
    }

    /// Turns on the clock-skew guard: times before 1970 (unless `allow_negative`) and more than
    /// `max_future_ms` ahead of the clock given to [`RecordParser::set_clock`] are dead letters.
    pub fn with_guard(mut self, max_future_ms: i64, allow_negative: bool) -> Self {
        self.max_future_ms = Some(max_future_ms);
        if !allow_negative {
            self.min_ts = 0;
        }
        self
    }

    /// The wall clock now (epoch ms), read once per chunk: the guard's upper bound follows it.
    pub fn set_clock(&mut self, now_ms: i64) {
        if let Some(ahead) = self.max_future_ms {
            self.max_ts = now_ms.saturating_add(ahead).min(MAX_ABS_EVENT_TIME_MS);
        }
    }

    /// Events one record becomes (one per binding).
    pub fn outputs(&self) -> usize {
        self.bindings.len()
    }

    /// Parses `line` into `events[..outputs()]` (and their payloads); returns its event time.
    #[inline]
    pub fn parse(&mut self, line: &[u8]) -> Result<i64, Malformed> {
        self.parse_inner(line, None)
    }

    /// Parses a record of a [`RecordParser::keyed`] parser, at time `ts`.
    #[inline]
    pub fn parse_at(&mut self, line: &[u8], ts: i64) -> Result<(), Malformed> {
        self.parse_inner(line, Some(ts)).map(|_| ())
    }

    #[inline(always)]
    fn parse_inner(&mut self, line: &[u8], given: Option<i64>) -> Result<i64, Malformed> {
        with_tokens(self.names.len(), |toks| self.parse_with(line, given, toks))
    }

    #[inline(always)]
    fn parse_with<'a>(
        &mut self,
        line: &'a [u8],
        given: Option<i64>,
        toks: &mut [Option<Token<'a>>],
    ) -> Result<i64, Malformed> {
        json::extract_shaped(line, &self.fields, &mut self.shape, toks)
            .map_err(|e| Malformed(format!("invalid JSON: {e}")))?;
        if let Some(kept) = &mut self.kept {
            for (k, t) in kept.iter_mut().zip(toks.iter()) {
                *k = t.as_ref().map(|t| Span::of(line, t));
            }
        }
        let ts = match given {
            Some(ts) if !self.with_time => ts,
            _ if self.no_time => NO_EVENT_TIME,
            _ => self.event_time(toks[self.ts_field])?,
        };
        self.bind_all(line, ts, toks)?;
        Ok(ts)
    }

    #[inline(always)]
    fn bind_all(
        &mut self,
        line: &[u8],
        ts: i64,
        toks: &[Option<Token<'_>>],
    ) -> Result<(), Malformed> {
        for b in 0..self.bindings.len() {
            self.bind(b, line, ts, toks)?;
        }
        Ok(())
    }

    /// Fills event `b` (and its payload) from the located tokens.
    #[inline(always)]
    fn bind(
        &mut self,
        b: usize,
        line: &[u8],
        ts: i64,
        toks: &[Option<Token<'_>>],
    ) -> Result<(), Malformed> {
        let binding = &self.bindings[b];
        let paths = &self.paths[..];
        let ev = &mut self.events[b];
        let payload = &mut self.payloads[b];
        ev.ts = ts;
        ev.port = binding.port;
        ev.flags = self.kind_flags;
        ev.kinds = 0;
        ev.extra = 0;
        payload.clear();
        // One plain key field that fits inline (the common group-by) is hashed and copied as it
        // lies in the line; anything else is assembled in `key` first.
        let single = match binding.key[..] {
            [p] if paths[p].rest.is_empty() => match toks[paths[p].top] {
                Some(t) if t.kind != TokenKind::Null && !t.has_escape => Some(t.raw),
                _ => None,
            },
            _ => None,
        };
        match single {
            Some(raw) if ev.set_key(raw) => ev.hash = hash_key(raw),
            _ => {
                let null = assemble_key(&binding.key, paths, toks, &mut self.key, &mut self.canon)?;
                if null {
                    ev.flags |= NULL_KEY;
                }
                ev.hash = hash_key(&self.key);
                payload.set_key(ev, &self.key);
            }
        }
        for (slot, &(p, use_)) in binding.values.iter().enumerate() {
            let v = value(paths, p, use_, toks, &mut self.canon)?;
            payload.set_value(ev, slot, v);
        }
        let row = binding.row.then(|| trim(line));
        payload.finish(ev, row, None);
        Ok(())
    }

    fn event_time(&self, tok: Option<Token<'_>>) -> Result<i64, Malformed> {
        let name = &self.names[self.ts_field];
        let tok = tok.ok_or_else(|| Malformed(format!("missing event time field `{name}`")))?;
        let ms = match (self.unit, tok.kind) {
            (TimeUnit::Rfc3339, TokenKind::String) => {
                let s = json::unescape(tok.raw)
                    .map_err(|e| Malformed(format!("field `{name}`: {e}")))?;
                json::parse_rfc3339_ms(s.as_bytes()).ok_or_else(|| {
                    Malformed(format!("field `{name}` is not an RFC 3339 timestamp"))
                })?
            }
            (TimeUnit::Rfc3339, _) => {
                return Err(Malformed(format!(
                    "field `{name}` must be an RFC 3339 string"
                )))
            }
            (unit, TokenKind::Number) => {
                let n = json::parse_number(tok.raw)
                    .map_err(|e| Malformed(format!("field `{name}`: {e}")))?;
                to_millis(n, unit)
                    .ok_or_else(|| Malformed(format!("field `{name}` is out of range")))?
            }
            _ => {
                return Err(Malformed(format!(
                    "field `{name}` must be a number (event time)"
                )))
            }
        };
        if ms.abs() > MAX_ABS_EVENT_TIME_MS {
            return Err(Malformed(format!(
                "field `{name}` is out of range: {ms} ms"
            )));
        }
        if ms < self.min_ts {
            return Err(Malformed(format!(
                "field `{name}` is before 1970 ({ms} ms); set event_time.allow_negative = true if that is meant"
            )));
        }
        if ms > self.max_ts {
            return Err(Malformed(format!(
                "field `{name}` is {:.0} s ahead of the wall clock (max_future {} s): a skewed clock would move the watermark past every other event",
                (ms - (self.max_ts - self.max_future_ms.unwrap_or(0))) as f64 / 1e3,
                self.max_future_ms.unwrap_or(0) / 1000
            )));
        }
        Ok(ms)
    }
}

/// The token at path `p`, stepping into objects.
#[inline(always)]
fn token<'a>(
    paths: &[Path],
    p: usize,
    toks: &[Option<Token<'a>>],
) -> Result<Option<Token<'a>>, Malformed> {
    let path = &paths[p];
    let mut tok = toks[path.top];
    for fs in &path.rest {
        tok = match tok {
            Some(t) if t.kind == TokenKind::Object => {
                let mut one = [None];
                json::extract(t.raw, fs, &mut one)
                    .map_err(|e| Malformed(format!("field `{}`: {e}", path.text)))?;
                one[0]
            }
            _ => None,
        };
    }
    Ok(tok)
}

/// Writes the key of fields `key` into `out`: each field's canonical token, 0-separated, `null`
/// for a missing or null one. True when some field was null.
fn assemble_key(
    key: &[usize],
    paths: &[Path],
    toks: &[Option<Token<'_>>],
    out: &mut Vec<u8>,
    canon: &mut Vec<u8>,
) -> Result<bool, Malformed> {
    out.clear();
    let mut null = false;
    for (i, &p) in key.iter().enumerate() {
        if i > 0 {
            out.push(0);
        }
        match token(paths, p, toks)? {
            Some(t) if t.kind != TokenKind::Null => {
                if t.has_escape {
                    let c = json::canonical(&t, canon)
                        .map_err(|e| Malformed(format!("field `{}`: {e}", paths[p].text)))?;
                    out.extend_from_slice(c);
                } else {
                    out.extend_from_slice(t.raw);
                }
            }
            _ => {
                out.extend_from_slice(b"null");
                null = true;
            }
        }
    }
    Ok(null)
}

/// The value of path `p` for a slot used as `use_`.
#[inline(always)]
fn value(
    paths: &[Path],
    p: usize,
    use_: SlotUse,
    toks: &[Option<Token<'_>>],
    canon: &mut Vec<u8>,
) -> Result<Value, Malformed> {
    let tok = token(paths, p, toks)?;
    let name = || &paths[p].text;
    Ok(match (tok, use_) {
        (None, _) => Value::Null,
        (Some(t), _) if t.kind == TokenKind::Null => Value::Null,
        (Some(t), SlotUse::Number) => match t.kind {
            TokenKind::Number => {
                number(t.raw).map_err(|e| Malformed(format!("field `{}`: {e}", name())))?
            }
            _ => {
                return Err(Malformed(format!(
                    "field `{}` is not a number (aggregates over it need one)",
                    name()
                )))
            }
        },
        (Some(t), SlotUse::Hash) if t.kind == TokenKind::Number => number_token_hash(t.raw),
        (Some(t), SlotUse::Hash) => {
            let bytes = if t.has_escape {
                json::canonical(&t, canon)
                    .map_err(|e| Malformed(format!("field `{}`: {e}", name())))?
            } else {
                t.raw
            };
            Value::Hash(hash_key(bytes))
        }
    })
}

/// A JSON number token as a value: an `i64` integer, else the exact decimal it spells, else (no
/// decimal of 28 digits holds it) a float.
pub fn number(raw: &[u8]) -> Result<Value, json::JsonError> {
    match json::parse_number(raw)? {
        Number::Int(i) => Ok(Value::Int(i)),
        Number::Float(f) => {
            let text = std::str::from_utf8(raw).unwrap_or_default();
            let exact = if text.contains(['e', 'E']) {
                Decimal::from_scientific(text).ok()
            } else {
                Decimal::from_str_exact(text).ok()
            };
            Ok(exact.map_or(Value::Float(f), Value::Dec))
        }
    }
}

/// A number token as `count_distinct` counts it: by value, not spelling (`event::number_hash`).
/// An integer token is already its canonical text (JSON has no leading zeros or `+`), so only
/// `-0` and tokens with a fraction or exponent are parsed.
fn number_token_hash(raw: &[u8]) -> Value {
    let integer = raw.iter().all(|&b| b.is_ascii_digit() || b == b'-');
    let h = if integer && raw != b"-0" {
        hash_key(raw)
    } else {
        // A token the number parser refuses is still a value: counted by its bytes.
        number(raw)
            .ok()
            .and_then(crate::record::event::number_hash)
            .unwrap_or_else(|| hash_key(raw))
    };
    Value::Hash(h)
}

/// `b` without leading and trailing ASCII whitespace (a row is the record as written).
fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end]
}

fn to_millis(n: Number, unit: TimeUnit) -> Option<i64> {
    let f = |x: f64| {
        if x.is_finite() && x.abs() < 9e18 {
            Some(x.floor() as i64)
        } else {
            None
        }
    };
    match (n, unit) {
        (Number::Int(i), TimeUnit::Millis) => Some(i),
        (Number::Int(i), TimeUnit::Seconds) => i.checked_mul(1000),
        (Number::Int(i), TimeUnit::Micros) => Some(i.div_euclid(1000)),
        (Number::Float(x), TimeUnit::Millis) => f(x),
        (Number::Float(x), TimeUnit::Seconds) => f(x * 1000.0),
        (Number::Float(x), TimeUnit::Micros) => f(x / 1000.0),
        (_, TimeUnit::Rfc3339) => None,
    }
}

#[cfg(test)]
mod tests;
