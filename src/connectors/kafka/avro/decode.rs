//! How Avro binary datums become the engine's JSON text: a plan compiled once per
//! (writer schema, reader schema) pair: which writer fields to write, skip or rename, which reader
//! defaults to append, how each value is promoted. Decoding a record allocates nothing and builds
//! no intermediate value; every length and count is checked against the bytes left, so no input
//! makes it allocate without bound, loop without bound or panic.
//!
//! Output is exact: a decimal becomes a JSON number with its scale's digits, integers stay
//! integers (timestamps, dates and times in their unit), bytes and fixed become base64 text, an
//! enum its (reader's) symbol, a union its branch's value; a record's fields come in the writer's
//! order, then the reader's defaults for fields the writer lacks.

use super::deref;
use apache_avro::schema::{InnerDecimalSchema, NamesRef, RecordField, Schema};

/// How deep schemas may nest (and how far a recursive type is unrolled) before compiling stops.
const MAX_DEPTH: usize = 64;
/// The most plan nodes one schema pair may compile to (a recursive type with two recursive
/// fields would otherwise unroll exponentially).
const MAX_NODES: usize = 20_000;
/// The widest decimal precision and scale read (Java's BigDecimal in Avro rarely passes 38).
const MAX_DECIMAL_DIGITS: usize = 76;
/// The most items an array or map of zero-width items (nulls) may claim.
pub(super) const MAX_EMPTY_ITEMS: u64 = 1 << 16;

/// One step of a compiled plan: how to read a writer value and what JSON to write for it.
#[derive(Debug, Clone)]
pub enum Node {
    Null,
    Bool,
    Int,
    Long,
    /// An int or long read as a float or double.
    IntAsFloat {
        long: bool,
    },
    /// A float, written as the float it is, or as the double it widens to.
    Float {
        as_double: bool,
    },
    Double,
    /// A string (or bytes read as a string).
    Str,
    /// Bytes (or a string read as bytes), written as base64.
    Bytes,
    Fixed(usize),
    Decimal {
        scale: usize,
        fixed: Option<usize>,
    },
    UuidFixed,
    Duration,
    /// Writer symbol index -> the reader's symbol as a JSON string, or why it has none.
    Enum(Vec<Result<Vec<u8>, String>>),
    Array(Box<Node>),
    Map(Box<Node>),
    Record(Vec<Field>),
    /// A writer union: each branch's plan (a branch the reader cannot hold: why).
    Union(Vec<Result<Node, String>>),
}

#[derive(Debug, Clone)]
pub enum Field {
    /// Read and written under the reader's name (`"name":` prepared).
    Read(Vec<u8>, Node),
    /// A writer field the reader does not have.
    Skip(Node),
    /// A reader field the writer lacks: its default, as `"name":JSON`.
    Default(Vec<u8>),
}

/// The plan reading `writer` datums as `reader` values.
pub fn compile(
    writer: &Schema,
    wn: &NamesRef<'_>,
    reader: &Schema,
    rn: &NamesRef<'_>,
) -> Result<Node, String> {
    let c = Compiler {
        wn,
        rn,
        nodes: std::cell::Cell::new(0),
    };
    c.node(writer, reader, 0)
}

struct Compiler<'a, 'w, 'r> {
    wn: &'a NamesRef<'w>,
    rn: &'a NamesRef<'r>,
    /// Nodes compiled so far, against `MAX_NODES`.
    nodes: std::cell::Cell<usize>,
}

impl Compiler<'_, '_, '_> {
    fn node(&self, w: &Schema, r: &Schema, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "the schema nests deeper than {MAX_DEPTH} (a recursive type?)"
            ));
        }
        self.nodes.set(self.nodes.get() + 1);
        if self.nodes.get() > MAX_NODES {
            return Err(format!(
                "the schema unrolls to more than {MAX_NODES} steps (a recursive type?)"
            ));
        }
        let (w, r) = (deref(w, self.wn)?, deref(r, self.rn)?);
        if let Schema::Union(u) = w {
            let branches = u
                .variants()
                .iter()
                .map(|b| self.node(b, r, depth + 1))
                .collect();
            return Ok(Node::Union(branches));
        }
        if let Schema::Union(u) = r {
            // The first reader branch of the writer's kind, preferring an exact match.
            let mut why = None;
            for b in u.variants() {
                let b = deref(b, self.rn)?;
                if same_kind(w, b) {
                    return self.node(w, b, depth + 1);
                }
            }
            for b in u.variants() {
                let b = deref(b, self.rn)?;
                let named = matches!(b, Schema::Record(_) | Schema::Enum(_) | Schema::Fixed(_));
                if named && !same_kind(w, b) {
                    continue;
                }
                match self.node(w, b, depth + 1) {
                    Ok(n) => return Ok(n),
                    Err(e) => why = why.or(Some(e)),
                }
            }
            return Err(why.unwrap_or_else(|| {
                format!("no branch of the reader's union holds a {}", kind(w))
            }));
        }
        self.plain(w, r, depth)
    }

    fn plain(&self, w: &Schema, r: &Schema, depth: usize) -> Result<Node, String> {
        use Schema as S;
        let int_like = |s: &Schema| matches!(s, S::Int | S::Date | S::TimeMillis);
        let long_like = |s: &Schema| {
            matches!(
                s,
                S::Long
                    | S::TimeMicros
                    | S::TimestampMillis
                    | S::TimestampMicros
                    | S::TimestampNanos
                    | S::LocalTimestampMillis
                    | S::LocalTimestampMicros
                    | S::LocalTimestampNanos
            )
        };
        Ok(match (w, r) {
            (S::Null, S::Null) => Node::Null,
            (S::Boolean, S::Boolean) => Node::Bool,
            (w, r) if int_like(w) && int_like(r) => Node::Int,
            (w, r) if int_like(w) && long_like(r) => Node::Int,
            (w, r) if long_like(w) && long_like(r) => Node::Long,
            (w, S::Float | S::Double) if int_like(w) => Node::IntAsFloat { long: false },
            (w, S::Float | S::Double) if long_like(w) => Node::IntAsFloat { long: true },
            (S::Float, S::Float) => Node::Float { as_double: false },
            (S::Float, S::Double) => Node::Float { as_double: true },
            (S::Double, S::Double) => Node::Double,
            (
                S::String | S::Uuid(apache_avro::schema::UuidSchema::String),
                S::String | S::Uuid(_),
            ) => Node::Str,
            (S::Bytes, S::String) => Node::Str,
            (S::String | S::Bytes, S::Bytes) => Node::Bytes,
            (S::Decimal(wd), S::Decimal(rd)) => {
                if wd.scale > MAX_DECIMAL_DIGITS || wd.precision > MAX_DECIMAL_DIGITS {
                    return Err(format!(
                        "decimal precision {} or scale {} beyond {MAX_DECIMAL_DIGITS} digits",
                        wd.precision, wd.scale
                    ));
                }
                if wd.scale != rd.scale {
                    return Err(format!(
                        "decimal scale {} cannot be read as scale {}",
                        wd.scale, rd.scale
                    ));
                }
                Node::Decimal {
                    scale: wd.scale,
                    fixed: match &wd.inner {
                        InnerDecimalSchema::Bytes => None,
                        InnerDecimalSchema::Fixed(f) => Some(f.size),
                    },
                }
            }
            (S::Uuid(apache_avro::schema::UuidSchema::Fixed(_)), S::Uuid(_)) => Node::UuidFixed,
            (S::Duration(_), S::Duration(_)) => Node::Duration,
            (S::Fixed(wf), S::Fixed(rf)) if wf.size == rf.size => Node::Fixed(wf.size),
            (S::Enum(we), S::Enum(re)) => Node::Enum(
                we.symbols
                    .iter()
                    .map(|s| {
                        let sym = if re.symbols.contains(s) {
                            Some(s)
                        } else {
                            re.default.as_ref()
                        };
                        sym.map(|s| json_string(s))
                            .ok_or_else(|| format!("enum symbol `{s}` is not in the reader's enum"))
                    })
                    .collect(),
            ),
            (S::Array(wa), S::Array(ra)) => {
                Node::Array(Box::new(self.node(&wa.items, &ra.items, depth + 1)?))
            }
            (S::Map(wm), S::Map(rm)) => {
                Node::Map(Box::new(self.node(&wm.types, &rm.types, depth + 1)?))
            }
            (S::Record(wr), S::Record(rr)) => self.record(&wr.fields, &rr.fields, depth)?,
            (w, r) => {
                return Err(format!(
                    "a writer {} cannot be read as a {}",
                    kind(w),
                    kind(r)
                ))
            }
        })
    }

    fn record(&self, wf: &[RecordField], rf: &[RecordField], depth: usize) -> Result<Node, String> {
        let find = |name: &str| {
            rf.iter()
                .find(|f| f.name == name || f.aliases.iter().any(|a| a == name))
        };
        let mut steps = Vec::with_capacity(wf.len());
        let mut matched = Vec::new();
        for w in wf {
            match find(&w.name).filter(|r| !matched.contains(&r.name.as_str())) {
                Some(r) => {
                    let node = self
                        .node(&w.schema, &r.schema, depth + 1)
                        .map_err(|e| format!("field `{}`: {e}", r.name))?;
                    matched.push(r.name.as_str());
                    steps.push(Field::Read(key(&r.name), node));
                }
                None => steps.push(Field::Skip(self.node(&w.schema, &w.schema, depth + 1)?)),
            }
        }
        for r in rf.iter().filter(|r| !matched.contains(&r.name.as_str())) {
            let d = r.default.as_ref().ok_or_else(|| {
                format!(
                    "the reader's field `{}` has no default and the writer lacks it",
                    r.name
                )
            })?;
            let mut out = key(&r.name);
            default_json(d, &r.schema, self.rn, &mut out)?;
            steps.push(Field::Default(out));
        }
        Ok(Node::Record(steps))
    }
}

fn same_kind(w: &Schema, r: &Schema) -> bool {
    std::mem::discriminant(w) == std::mem::discriminant(r)
        && match (w, r) {
            (Schema::Record(a), Schema::Record(b)) => a.name.name() == b.name.name(),
            (Schema::Enum(a), Schema::Enum(b)) => a.name.name() == b.name.name(),
            (Schema::Fixed(a), Schema::Fixed(b)) => a.name.name() == b.name.name(),
            _ => true,
        }
}

fn kind(s: &Schema) -> String {
    let k = format!("{:?}", apache_avro::schema::SchemaKind::from(s));
    k.to_ascii_lowercase()
}

fn key(name: &str) -> Vec<u8> {
    let mut k = json_string(name);
    k.push(b':');
    k
}

fn json_string(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 2);
    write_str(s, &mut out);
    out
}

/// A reader default (Avro's JSON encoding of a value of `schema`) as the engine's JSON: bytes,
/// fixed and decimals are strings of code points 0-255 there.
fn default_json(
    d: &serde_json::Value,
    schema: &Schema,
    names: &NamesRef<'_>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let schema = match deref(schema, names)? {
        // A union's default is a value of its first branch.
        Schema::Union(u) => deref(u.variants().first().ok_or("an empty union")?, names)?,
        s => s,
    };
    let code_points = |v: &serde_json::Value| -> Result<Vec<u8>, String> {
        v.as_str()
            .ok_or("a bytes default must be a string")?
            .chars()
            .map(|c| {
                u8::try_from(c as u32)
                    .map_err(|_| "a bytes default holds a code point above 255".to_string())
            })
            .collect()
    };
    match schema {
        Schema::Bytes | Schema::Fixed(_) => write_str(&super::base64(&code_points(d)?), out),
        Schema::Decimal(ds) => {
            let b = code_points(d)?;
            decimal(&b, ds.scale, out);
        }
        _ => {
            serde_json::to_writer(&mut *out, d).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

use super::read::write_str;
pub use super::read::{decimal, run};
