//! Avro records in the Confluent wire format (a zero magic byte, the schema's registry id as a
//! big-endian u32, then the Avro binary datum), read into the engine's JSON records and written
//! from them. A source resolves each record's writer schema (by its id, fetched once per id) to
//! one reader schema — a subject's latest version at start or a pinned version — so fields added
//! with defaults, removed fields and promoted types read as Avro's schema-resolution rules say. A
//! sink registers its schema (or takes its subject's latest) and writes every record with it.

pub mod decode;
pub mod from_json;
mod read;
pub mod registry;

#[cfg(test)]
mod tests;

use apache_avro::schema::{ResolvedSchema, Schema};
use apache_avro::writer::datum::GenericDatumWriter;
use registry::Registry;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// After a registry lookup for an id fails, records with that id are dead letters for this long
/// before the registry is asked again (a record per lookup would stall the shard on an outage).
const RETRY_AFTER: Duration = Duration::from_secs(10);

/// Unknown ids remembered as failed, at most (then forgotten together).
const MAX_FAILED: usize = 1024;

/// Why a record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecodable {
    /// The registry could not be reached (after retries): no record of this id can be read now.
    pub fatal: bool,
    pub message: String,
}

impl Undecodable {
    fn record(message: String) -> Undecodable {
        Undecodable {
            fatal: false,
            message,
        }
    }
}

/// A schema registry as configured: its URL and optional basic-auth credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryPlan {
    pub url: String,
    /// `(user, password)`, the password already read from its variable or file.
    pub basic: Option<(String, String)>,
}

impl RegistryPlan {
    pub fn client(&self) -> Registry {
        Registry::new(
            &self.url,
            self.basic.as_ref().map(|(u, p)| (u.as_str(), p.as_str())),
        )
    }
}

/// `format = "avro"` on a Kafka source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvroSourcePlan {
    pub registry: RegistryPlan,
    /// Where the reader schema is registered (default `TOPIC-value`).
    pub subject: String,
    /// The reader schema's version; `None`: the latest at start.
    pub version: Option<u32>,
}

/// `format = "avro"` on a Kafka sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvroSinkPlan {
    pub registry: RegistryPlan,
    /// Default `TOPIC-value`.
    pub subject: String,
    /// The schema to register (an `.avsc` file's text); `None`: the subject's latest version.
    pub schema: Option<String>,
}

/// A sink's schema lives as long as the process (its writer borrows it; one per sink).
fn leak(schema: Schema) -> &'static Schema {
    Box::leak(Box::new(schema))
}

fn parse(text: &str, what: &str) -> Result<Schema, String> {
    Schema::parse_str(text).map_err(|e| format!("{what} is not an Avro schema: {e}"))
}

/// What every shard of one Avro source shares: the registry and the reader schema.
#[derive(Debug)]
pub struct AvroSource {
    registry: Registry,
    /// `None`: each writer schema is read as itself (record keys).
    reader: Option<Schema>,
    /// The reader schema's version, for logs.
    pub version: u32,
    /// A decoded record longer than this is refused (it would be a dead letter as too long anyway).
    max_out: usize,
}

impl AvroSource {
    /// Fetches the reader schema: called at start, so a missing subject fails the run before it reads.
    pub fn open(plan: &AvroSourcePlan, max_record_bytes: usize) -> Result<AvroSource, String> {
        let registry = plan.registry.client();
        let v = registry.subject_version(&plan.subject, plan.version)?;
        let what = format!("version {} of subject `{}`", v.version, plan.subject);
        let reader = parse(&v.schema, &what)?;
        // Resolving names now reports a schema that references an undefined type at start.
        ResolvedSchema::try_from(&reader).map_err(|e| format!("{what}: {e}"))?;
        Ok(AvroSource {
            registry,
            reader: Some(reader),
            version: v.version,
            max_out: max_record_bytes,
        })
    }

    /// Record keys: each read with its own writer schema (no reader schema, so nothing is asked
    /// of the registry until the first key).
    pub fn keys(plan: &RegistryPlan, max_record_bytes: usize) -> AvroSource {
        AvroSource {
            registry: plan.client(),
            reader: None,
            version: 0,
            max_out: max_record_bytes,
        }
    }
}

/// One writer schema's compiled plan for the reader schema (or why it cannot be read so).
struct Known {
    plan: Result<decode::Node, String>,
    max_out: usize,
}

/// One shard's decoder for one Avro source: writer schemas by id, fetched when first seen.
pub struct AvroDecoder {
    shared: Arc<AvroSource>,
    known: HashMap<u32, Known>,
    /// Ids whose lookup failed, with when and why.
    failed: HashMap<u32, (Instant, String)>,
}

impl std::fmt::Debug for AvroDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AvroDecoder({} schemas)", self.known.len())
    }
}

impl AvroDecoder {
    pub fn new(shared: Arc<AvroSource>) -> Result<AvroDecoder, String> {
        Ok(AvroDecoder {
            shared,
            known: HashMap::new(),
            failed: HashMap::new(),
        })
    }

    /// A decoder that knows `writers` (id, schema text) up front and resolves them to `reader`,
    /// with no registry behind it (an unknown id is an error): for benchmarks and tests.
    pub fn with_schemas(reader: &str, writers: &[(u32, &str)]) -> Result<AvroDecoder, String> {
        let shared = Arc::new(AvroSource {
            registry: Registry::new("http://127.0.0.1:9", None),
            reader: Some(parse(reader, "the reader schema")?),
            version: 0,
            max_out: 1 << 20,
        });
        let mut d = AvroDecoder::new(shared.clone())?;
        for (id, text) in writers {
            let w = parse(text, &format!("schema id {id}"))?;
            d.known
                .insert(*id, Known::new(&w, shared.reader.as_ref(), shared.max_out)?);
        }
        Ok(d)
    }

    /// Writes the record `raw` (Confluent wire format) as one JSON object into `out`. An error
    /// is the record's (a dead letter), unless the registry could not be reached at all
    /// ([`Undecodable::fatal`]): then no record can be read, and the run stops rather than
    /// dead-lettering records by the timing of an outage.
    pub fn to_json(&mut self, raw: &[u8], out: &mut Vec<u8>) -> Result<(), Undecodable> {
        out.clear();
        let (id, body) = split_wire(raw).map_err(Undecodable::record)?;
        self.learn(id)?;
        let known = self
            .known
            .get(&id)
            .ok_or_else(|| Undecodable::record("a schema id without its schema".into()))?;
        known
            .read(body, out)
            .map_err(|e| Undecodable::record(format!("schema id {id}: {e}")))
    }

    /// Makes sure the writer schema of `id` is known, asking the registry when it is not.
    fn learn(&mut self, id: u32) -> Result<(), Undecodable> {
        if !self.known.contains_key(&id) {
            if let Some((at, why)) = self.failed.get(&id) {
                if at.elapsed() < RETRY_AFTER {
                    return Err(Undecodable::record(why.clone()));
                }
            }
            match self.fetch(id) {
                Ok(k) => {
                    self.failed.remove(&id);
                    self.known.insert(id, k);
                }
                Err(e) if e.fatal => return Err(e),
                Err(e) => {
                    // Bounded: a record stream of made-up ids keeps at most this many.
                    if self.failed.len() >= MAX_FAILED {
                        self.failed.clear();
                    }
                    self.failed.insert(id, (Instant::now(), e.message.clone()));
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn fetch(&self, id: u32) -> Result<Known, Undecodable> {
        let text = self
            .shared
            .registry
            .schema_by_id(id)
            .map_err(|e| Undecodable {
                fatal: !e.refused,
                message: format!("schema id {id}: {e}"),
            })?;
        let writer = parse(&text, &format!("schema id {id}")).map_err(Undecodable::record)?;
        Known::new(&writer, self.shared.reader.as_ref(), self.shared.max_out)
            .map_err(|e| Undecodable::record(format!("schema id {id}: {e}")))
    }
}

impl Known {
    /// `reader`: `None` reads the writer schema as itself.
    fn new(writer: &Schema, reader: Option<&Schema>, max_out: usize) -> Result<Known, String> {
        let reader = reader.unwrap_or(writer);
        let wn = ResolvedSchema::try_from(writer).map_err(|e| e.to_string())?;
        let rn = ResolvedSchema::try_from(reader).map_err(|e| e.to_string())?;
        Ok(Known {
            plan: decode::compile(writer, wn.get_names(), reader, rn.get_names())
                .map_err(|e| format!("cannot be read as the reader schema: {e}")),
            max_out,
        })
    }

    /// The datum `body` of this writer schema as the JSON of a reader-schema value, into `out`.
    fn read(&self, body: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let plan = self.plan.as_ref().map_err(String::clone)?;
        let mut input = body;
        decode::run(plan, &mut input, out, self.max_out)
            .map_err(|e| format!("not an Avro record of this schema: {e}"))
    }
}

/// A named type's definition for a reference to it.
pub fn deref<'a>(
    schema: &'a Schema,
    names: &'a apache_avro::schema::NamesRef<'_>,
) -> Result<&'a Schema, String> {
    match schema {
        Schema::Ref { name } => names
            .get(name)
            .copied()
            .ok_or_else(|| format!("the schema names `{name}` but does not define it")),
        s => Ok(s),
    }
}

/// The schema id and the datum of a Confluent wire-format record.
pub fn split_wire(raw: &[u8]) -> Result<(u32, &[u8]), String> {
    match raw {
        [0, a, b, c, d, body @ ..] => Ok((u32::from_be_bytes([*a, *b, *c, *d]), body)),
        [m, ..] if *m != 0 => Err(format!(
            "not a schema-registry Avro record: magic byte {m}, expected 0"
        )),
        _ => Err(format!(
            "not a schema-registry Avro record: {} bytes, shorter than its 5-byte header",
            raw.len()
        )),
    }
}

/// A Kafka sink's encoder: one registered schema, every record written with its id.
pub struct AvroEncoder {
    schema: &'static Schema,
    names: ResolvedSchema<'static>,
    writer: GenericDatumWriter<'static>,
    pub id: u32,
}

impl std::fmt::Debug for AvroEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AvroEncoder(id {})", self.id)
    }
}

impl AvroEncoder {
    /// Registers the plan's schema (or looks up the subject's latest): at start, so a refused
    /// schema or an unreachable registry fails the run before anything is read.
    pub fn open(plan: &AvroSinkPlan) -> Result<AvroEncoder, String> {
        let registry = plan.registry.client();
        let (id, text) = match &plan.schema {
            Some(text) => {
                parse(text, "the sink's schema")?;
                (registry.register(&plan.subject, text)?, text.clone())
            }
            None => {
                let v = registry.subject_version(&plan.subject, None)?;
                (v.id, v.schema)
            }
        };
        AvroEncoder::with_schema(id, &text)
    }

    /// An encoder writing schema `text` under registry id `id`.
    pub fn with_schema(id: u32, text: &str) -> Result<AvroEncoder, String> {
        let schema = leak(parse(text, &format!("schema id {id}"))?);
        let names = ResolvedSchema::try_from(schema).map_err(|e| e.to_string())?;
        let writer = GenericDatumWriter::builder(schema)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(AvroEncoder {
            schema,
            names,
            writer,
            id,
        })
    }

    /// The wire-format record of result line `line`, into `out`; errors say which field does
    /// not fit, for the dead letters.
    pub fn encode(&self, line: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        out.clear();
        let raw: &serde_json::value::RawValue =
            serde_json::from_slice(line).map_err(|e| format!("not a JSON record: {e}"))?;
        let value = from_json::value(raw, self.schema, self.names.get_names(), "")?;
        out.push(0);
        out.extend_from_slice(&self.id.to_be_bytes());
        self.writer
            .write_value_ref(out, &value)
            .map(|_| ())
            .map_err(|e| format!("does not fit the sink's Avro schema: {e}"))
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (how Flink's JSON format writes BYTES).
pub fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding optional); `None` for anything else.
pub fn unbase64(text: &str) -> Option<Vec<u8>> {
    let t = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(t.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in t.bytes() {
        let v = B64.iter().position(|&x| x == c)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}
