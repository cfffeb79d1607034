//! Helpers shared by the operators' unit tests: events built as the record binding builds them
//! (key, values and row through a [`PayloadBuf`], the payload read back from ring slots as a
//! receiver reads it), and an [`Emitter`] that records everything it is given.

use super::{Emitter, Output};
use crate::record::event::{hash_key, slot_bytes, Event, PayloadBuf, Rec, Value, NULL_KEY};

/// An event and its payload bytes, as a receiver holds them after reading its ring slots.
#[derive(Clone, Debug)]
pub struct Owned {
    pub ev: Event,
    pub payload: Vec<u8>,
}

impl Owned {
    /// An event on `port` with key `key` (hashed as the binding hashes it), value slots `values`
    /// (inline where they fit, else in the payload) and the record `row`, if any.
    pub fn new(port: u16, key: &[u8], ts: i64, values: &[Value], row: Option<&[u8]>) -> Owned {
        let mut ev = Event::EMPTY;
        ev.ts = ts;
        ev.port = port;
        ev.hash = hash_key(key);
        let mut p = PayloadBuf::default();
        p.set_key(&mut ev, key);
        for (slot, v) in values.iter().enumerate() {
            p.set_value(&mut ev, slot, *v);
        }
        p.finish(&mut ev, row, None);
        // Through slots and back, padding included, exactly as a ring delivers it.
        let slots: Vec<Event> = p.slots().collect();
        Owned {
            ev,
            payload: slot_bytes(&slots).to_vec(),
        }
    }

    /// The same event marked as having a missing or null key field (its key bytes as the binding
    /// writes them: `null` for that field).
    pub fn null_key(mut self) -> Owned {
        self.ev.flags |= NULL_KEY;
        self
    }

    pub fn rec(&self) -> Rec<'_> {
        Rec::parse(&self.ev, &self.payload).expect("a payload built by PayloadBuf parses")
    }
}

/// One output as the emitter received it.
#[derive(Clone, Debug, PartialEq)]
pub struct Emitted {
    /// The line without its `\n`.
    pub line: String,
    pub ts: i64,
    /// The event time of its cause; `None` when a watermark step emitted it.
    pub cause: Option<i64>,
    pub key: u64,
    /// It takes a row back (`-U` or `-D`).
    pub retract: bool,
    pub kind: crate::record::event::RowKind,
}

/// Records every output, in order.
#[derive(Default)]
pub struct Collect {
    /// Every line (retractions included) without its `\n`, in emission order.
    pub lines: Vec<String>,
    pub emitted: Vec<Emitted>,
    /// Event times of the records sent to the late output.
    pub late: Vec<i64>,
    /// Their rows, when they carried one.
    pub late_rows: Vec<Option<Vec<u8>>>,
    /// What `wants_retractions` answers.
    pub retractions: bool,
}

impl Collect {
    pub fn wanting_retractions() -> Collect {
        Collect {
            retractions: true,
            ..Collect::default()
        }
    }

    /// The lines, sorted (for outputs whose order within a step is not specified).
    pub fn sorted(&self) -> Vec<String> {
        let mut v = self.lines.clone();
        v.sort();
        v
    }
}

impl Emitter for Collect {
    fn emit(&mut self, out: Output<'_>) {
        let line = String::from_utf8(out.line.to_vec()).expect("output is UTF-8");
        let line = line
            .strip_suffix('\n')
            .unwrap_or_else(|| panic!("a line ends with a newline: {line:?}"));
        assert!(!line.contains('\n'), "one line per output: {line:?}");
        self.lines.push(line.to_string());
        self.emitted.push(Emitted {
            line: line.to_string(),
            ts: out.ts,
            cause: out.cause.map(|e| e.ts),
            key: out.key,
            retract: out.kind.is_retraction(),
            kind: out.kind,
        });
    }

    fn late(&mut self, rec: &Rec<'_>) {
        self.late.push(rec.ev.ts);
        self.late_rows.push(rec.row().map(<[u8]>::to_vec));
    }

    fn wants_retractions(&self) -> bool {
        self.retractions
    }
}

/// A JSON string token of exactly `len` bytes (quotes included) starting with `tag`: a key longer
/// than an event holds inline when `len` is over 39.
pub fn long_token(tag: &str, len: usize) -> String {
    let mut s = format!("\"{tag}-");
    while s.len() < len - 1 {
        s.push((b'a' + (s.len() % 26) as u8) as char);
    }
    s.push('"');
    assert_eq!(s.len(), len);
    s
}
