//! The `generator` source: synthetic clicks made in-process from [`model::ClickModel`], so a
//! benchmark or the quickstart needs no files. A chunk is a range of event indices; since every
//! event is a pure function of its index, any shard can make any chunk.

use super::model::{self, Click, ClickModel};
use crate::plan::SlotUse;
use crate::record::bind::Binding;
use crate::record::event::{hash_key, Event, Value};

/// The fields a generated click has, in JSON order.
pub const FIELDS: [&str; 4] = ["ad_id", "user_id", "ts", "bid"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    AdId,
    UserId,
    Ts,
    Bid,
}

fn field(name: &str) -> Option<Field> {
    match name {
        "ad_id" => Some(Field::AdId),
        "user_id" => Some(Field::UserId),
        "ts" => Some(Field::Ts),
        "bid" => Some(Field::Bid),
        _ => None,
    }
}

struct GenBinding {
    port: u16,
    key: Vec<Field>,
    slots: Vec<(Field, SlotUse)>,
}

/// Builds events for each port a generator source feeds straight from the click, without
/// rendering it (the common case); bindings it cannot serve (nested paths, rows) are refused, and
/// the runtime binds the click's JSON line instead.
pub struct GenParser {
    bindings: Vec<GenBinding>,
    key: Vec<u8>,
}

impl GenParser {
    pub fn new(bindings: &[Binding]) -> Result<Self, String> {
        let lookup = |p: &crate::expr::FieldPath| {
            if p.segments().len() != 1 {
                return Err(format!(
                    "the generator's fields are flat; `{p}` is a nested path"
                ));
            }
            field(p.as_str()).ok_or_else(|| {
                format!(
                    "the generator has no field `{p}`; it has {}",
                    FIELDS.join(", ")
                )
            })
        };
        let mut out = Vec::new();
        for b in bindings {
            if b.row {
                return Err("rows are bound from the click's JSON line".into());
            }
            let key = b.key.iter().map(lookup).collect::<Result<Vec<_>, _>>()?;
            let mut slots = Vec::new();
            for (f, u) in &b.values {
                let fld = lookup(f)?;
                if *u == SlotUse::Number && matches!(fld, Field::AdId | Field::UserId) {
                    return Err(format!(
                        "generator field `{f}` is a string; numeric aggregates need a number"
                    ));
                }
                slots.push((fld, *u));
            }
            if slots.len() > crate::record::event::INLINE_VALUES {
                return Err("more values than an event carries inline".into());
            }
            out.push(GenBinding {
                port: b.port,
                key,
                slots,
            });
        }
        Ok(GenParser {
            bindings: out,
            key: Vec::with_capacity(48),
        })
    }

    pub fn outputs(&self) -> usize {
        self.bindings.len()
    }

    fn token(c: &Click, f: Field, out: &mut Vec<u8>) {
        match f {
            Field::AdId => {
                out.push(b'"');
                model::write_ad_id(c.ad_id, out);
                out.push(b'"');
            }
            Field::UserId => {
                out.push(b'"');
                model::write_user_id(c.user_id, out);
                out.push(b'"');
            }
            Field::Ts => crate::record::text::write_i64(c.ts, out),
            Field::Bid => crate::record::text::write_i64(c.bid, out),
        }
    }

    /// Fills `out[..outputs()]` for click `c`.
    #[inline]
    pub fn build(&mut self, c: &Click, out: &mut [Event]) {
        for (b, ev) in self.bindings.iter().zip(out.iter_mut()) {
            *ev = Event::EMPTY;
            ev.ts = c.ts;
            ev.port = b.port;
            self.key.clear();
            for (i, &f) in b.key.iter().enumerate() {
                if i > 0 {
                    self.key.push(0);
                }
                Self::token(c, f, &mut self.key);
            }
            // Generated keys are at most ~25 bytes, well inside the inline limit.
            let _ = ev.set_key(&self.key);
            ev.hash = hash_key(&self.key);
            for (slot, &(f, use_)) in b.slots.iter().enumerate() {
                let v = match (f, use_) {
                    (Field::Ts, SlotUse::Number) => Value::Int(c.ts),
                    (Field::Bid, SlotUse::Number) => Value::Int(c.bid),
                    (f, _) => {
                        self.key.clear();
                        Self::token(c, f, &mut self.key);
                        Value::Hash(hash_key(&self.key))
                    }
                };
                ev.set_value(slot, v);
            }
        }
    }
}

/// Appends the NDJSON line of event `i` (for the late side output).
pub fn raw_record(model: &ClickModel, i: u64, out: &mut Vec<u8>) {
    model::write_ndjson(&model.click(i), out);
}
