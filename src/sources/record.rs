//! Turning one input record into the events each consuming window needs.
//!
//! A [`Binding`] says, for one window fed by this source, which fields form its key and which value
//! slot each aggregate input goes to. The parser extracts only those fields (plus event time) and
//! builds one [`Event`] per binding. Anything it cannot interpret is a [`Malformed`] reason for the
//! dead-letter output; nothing is guessed.

use super::json::{self, FieldSet, Number, Token, TokenKind};
use crate::event::{hash_key, Event, Value, INLINE_KEY_BYTES};
use crate::plan::TimeUnit;

/// Largest accepted |event time| in ms (about year 33658): keeps window arithmetic far from overflow.
pub const MAX_ABS_EVENT_TIME_MS: i64 = 1_000_000_000_000_000;
/// Distinct fields one source can project (event time, keys and aggregate inputs of all its windows).
pub const MAX_FIELDS: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotUse {
    /// A JSON number (or null) for sum/min/max/avg.
    Number,
    /// Any JSON value, hashed, for count_distinct.
    Hash,
}

#[derive(Debug, Clone)]
pub struct Binding {
    pub op: u8,
    /// Field names forming the key, in group-by order.
    pub key_fields: Vec<String>,
    /// Value slots: (field name, how it is used); slot i is `slots[i]`.
    pub slots: Vec<(String, SlotUse)>,
}

/// Why a record went to the dead-letter output.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed(pub String);

struct CompiledBinding {
    op: u8,
    key_fields: Vec<usize>,
    slots: Vec<(usize, SlotUse)>,
}

pub struct RecordParser {
    fields: FieldSet,
    names: Vec<String>,
    ts_field: usize,
    /// False for records past a filter or select: their event time is the source record's,
    /// handed to [`RecordParser::parse_at`].
    with_time: bool,
    unit: TimeUnit,
    /// Clock-skew guard: event times below `min_ts` or above `max_ts` are dead letters.
    min_ts: i64,
    max_ts: i64,
    /// How far ahead of the wall clock an event may be (`max_ts` = clock + this).
    max_future_ms: Option<i64>,
    bindings: Vec<CompiledBinding>,
    key: Vec<u8>,
    canon: Vec<u8>,
}

impl RecordParser {
    /// `Err` names the limit exceeded; checked before any thread starts.
    pub fn new(ts_field: &str, unit: TimeUnit, bindings: &[Binding]) -> Result<Self, String> {
        let mut names: Vec<String> = vec![ts_field.to_string()];
        let index = |n: &str, names: &mut Vec<String>| match names.iter().position(|x| x == n) {
            Some(i) => i,
            None => {
                names.push(n.to_string());
                names.len() - 1
            }
        };
        let compiled = bindings
            .iter()
            .map(|b| CompiledBinding {
                op: b.op,
                key_fields: b.key_fields.iter().map(|f| index(f, &mut names)).collect(),
                slots: b
                    .slots
                    .iter()
                    .map(|(f, u)| (index(f, &mut names), *u))
                    .collect(),
            })
            .collect();
        if names.len() > MAX_FIELDS {
            return Err(format!(
                "a source can feed at most {MAX_FIELDS} distinct fields to its windows; this one needs {}",
                names.len()
            ));
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        Ok(RecordParser {
            fields: FieldSet::new(&refs),
            names,
            ts_field: 0,
            with_time: true,
            unit,
            min_ts: -MAX_ABS_EVENT_TIME_MS,
            max_ts: MAX_ABS_EVENT_TIME_MS,
            max_future_ms: None,
            bindings: compiled,
            key: Vec::with_capacity(64),
            canon: Vec::with_capacity(64),
        })
    }

    /// A parser for records that carry no event time of their own (a select's output): key and
    /// values only, the time given by the caller.
    pub fn keyed(bindings: &[Binding]) -> Result<Self, String> {
        // A field name no JSON key can be (the time slot stays, unused).
        let mut p = RecordParser::new("\u{0}no event time", TimeUnit::Millis, bindings)?;
        p.with_time = false;
        Ok(p)
    }

    /// Parses a record of a [`RecordParser::keyed`] parser into `out[..outputs()]`, at time `ts`.
    #[inline]
    pub fn parse_at(&mut self, line: &[u8], ts: i64, out: &mut [Event]) -> Result<(), Malformed> {
        self.parse_inner(line, Some(ts), out).map(|_| ())
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

    pub fn outputs(&self) -> usize {
        self.bindings.len()
    }

    /// Parses `line` into `out[..outputs()]` (only `ts`, `op`, key, hash and values are set).
    #[inline]
    pub fn parse(&mut self, line: &[u8], out: &mut [Event]) -> Result<i64, Malformed> {
        self.parse_inner(line, None, out)
    }

    #[inline(always)]
    fn parse_inner(
        &mut self,
        line: &[u8],
        given: Option<i64>,
        out: &mut [Event],
    ) -> Result<i64, Malformed> {
        let mut toks: [Option<Token<'_>>; MAX_FIELDS] = [None; MAX_FIELDS];
        let toks = &mut toks[..self.names.len()];
        json::extract(line, &self.fields, toks)
            .map_err(|e| Malformed(format!("invalid JSON: {e}")))?;
        let ts = match given {
            Some(ts) if !self.with_time => ts,
            _ => self.event_time(toks[self.ts_field])?,
        };
        for (b, ev) in self.bindings.iter().zip(out.iter_mut()) {
            ev.ts = ts;
            ev.op = b.op;
            self.key.clear();
            for (i, &f) in b.key_fields.iter().enumerate() {
                if i > 0 {
                    self.key.push(0);
                }
                match &toks[f] {
                    None => self.key.extend_from_slice(b"null"),
                    Some(t) if !t.has_escape => self.key.extend_from_slice(t.raw),
                    Some(t) => {
                        let c = json::canonical(t, &mut self.canon)
                            .map_err(|e| Malformed(format!("field `{}`: {e}", self.names[f])))?;
                        self.key.extend_from_slice(c);
                    }
                }
            }
            if !ev.set_key(&self.key) {
                return Err(Malformed(format!(
                    "group-by key is {} bytes; the inline key limit is {INLINE_KEY_BYTES}",
                    self.key.len()
                )));
            }
            ev.hash = hash_key(&self.key);
            ev.kinds = 0;
            for (slot, &(f, use_)) in b.slots.iter().enumerate() {
                let v = match (&toks[f], use_) {
                    (None, _) => Value::Null,
                    (Some(t), _) if t.kind == TokenKind::Null => Value::Null,
                    (Some(t), SlotUse::Number) => match t.kind {
                        TokenKind::Number => match json::parse_number(t.raw) {
                            Ok(Number::Int(i)) => Value::Int(i),
                            Ok(Number::Float(x)) => Value::Float(x),
                            Err(e) => {
                                return Err(Malformed(format!("field `{}`: {e}", self.names[f])))
                            }
                        },
                        _ => {
                            return Err(Malformed(format!(
                                "field `{}` is not a number (aggregates over it need one)",
                                self.names[f]
                            )))
                        }
                    },
                    (Some(t), SlotUse::Hash) => {
                        let bytes = if t.has_escape {
                            json::canonical(t, &mut self.canon)
                                .map_err(|e| Malformed(format!("field `{}`: {e}", self.names[f])))?
                        } else {
                            t.raw
                        };
                        Value::Hash(hash_key(bytes))
                    }
                };
                ev.set_value(slot, v);
            }
        }
        Ok(ts)
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
mod tests {
    use super::*;

    fn parser(unit: TimeUnit) -> RecordParser {
        RecordParser::new(
            "ts",
            unit,
            &[Binding {
                op: 0,
                key_fields: vec!["ad_id".into(), "n".into()],
                slots: vec![
                    ("bid".into(), SlotUse::Number),
                    ("user".into(), SlotUse::Hash),
                ],
            }],
        )
        .unwrap()
    }

    #[test]
    fn projects_key_values_and_time() {
        let mut p = parser(TimeUnit::Millis);
        let mut out = [Event::EMPTY];
        let ts = p
            .parse(
                br#"{"x":[1,{"y":2}],"ad_id":"a\u0062","ts":1700,"bid":2.5,"user":"u1","n":7}"#,
                &mut out,
            )
            .unwrap();
        assert_eq!(ts, 1700);
        assert_eq!(out[0].key(), b"\"ab\"\x007");
        assert_eq!(out[0].value(0), Value::Float(2.5));
        assert_eq!(out[0].value(1), Value::Hash(hash_key(b"\"u1\"")));
        // The same key spelt without escapes hashes identically.
        let mut out2 = [Event::EMPTY];
        p.parse(br#"{"ad_id":"ab","ts":1,"n":7}"#, &mut out2)
            .unwrap();
        assert_eq!(out2[0].hash, out[0].hash);
        assert_eq!(
            out2[0].value(0),
            Value::Null,
            "missing numeric field is null"
        );
    }

    #[test]
    fn units_convert_to_millis_with_floor() {
        let mut out = [Event::EMPTY];
        assert_eq!(
            parser(TimeUnit::Seconds).parse(br#"{"ts":1.5}"#, &mut out),
            Ok(1500)
        );
        assert_eq!(
            parser(TimeUnit::Micros).parse(br#"{"ts":-1}"#, &mut out),
            Ok(-1)
        );
        assert_eq!(
            parser(TimeUnit::Rfc3339).parse(br#"{"ts":"1970-01-01T00:00:01.250Z"}"#, &mut out),
            Ok(1250)
        );
    }

    #[test]
    fn malformed_records_say_why() {
        let mut p = parser(TimeUnit::Millis);
        let mut out = [Event::EMPTY];
        let err = |p: &mut RecordParser, l: &[u8]| p.parse(l, &mut [Event::EMPTY]).unwrap_err().0;
        assert!(err(&mut p, br#"{"ad_id":"a"}"#).contains("missing event time field `ts`"));
        assert!(err(&mut p, br#"{"ts":"soon"}"#).contains("must be a number"));
        assert!(err(&mut p, br#"{"ts":1,"bid":"9"}"#).contains("`bid` is not a number"));
        assert!(err(&mut p, br#"{"ts":1,"#).contains("invalid JSON"));
        assert!(err(&mut p, br#"{"ts":1e300}"#).contains("out of range"));
        let long = format!(r#"{{"ts":1,"ad_id":"{}"}}"#, "k".repeat(80));
        assert!(err(&mut p, long.as_bytes()).contains("inline key limit"));
        assert!(p.parse(br#"{"ts":1}"#, &mut out).is_ok());
    }
}
