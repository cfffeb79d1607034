//! Running a compiled plan ([`super::decode`]) over one Avro binary datum: the engine's JSON text
//! straight from the bytes. Every length and block count is checked against the bytes left and a
//! per-datum budget of items and output bytes, so no datum allocates, loops or nests without
//! bound, and none can panic.

use super::decode::{Field, Node, MAX_EMPTY_ITEMS};
use std::io::Write;

/// What one datum may cost: array and map items (so items of no width cannot loop without end)
/// and output bytes (so defaults and nesting cannot blow a small record up).
struct Budget {
    items: u64,
    max_out: usize,
}

/// Reads one datum of `node` from `input`, writing its JSON to `out`, at most `max_out` bytes.
pub fn run(
    node: &Node,
    input: &mut &[u8],
    out: &mut Vec<u8>,
    max_out: usize,
) -> Result<(), String> {
    let mut b = Budget {
        items: input.len() as u64 + MAX_EMPTY_ITEMS,
        max_out,
    };
    step(node, input, out, &mut b)
}

fn step(node: &Node, input: &mut &[u8], out: &mut Vec<u8>, b: &mut Budget) -> Result<(), String> {
    if out.len() > b.max_out {
        return Err(format!("the record's JSON passes {} bytes", b.max_out));
    }
    match node {
        Node::Null => out.extend_from_slice(b"null"),
        Node::Bool => match take(input, 1)? {
            [0] => out.extend_from_slice(b"false"),
            [1] => out.extend_from_slice(b"true"),
            _ => return Err("a boolean byte other than 0 or 1".into()),
        },
        Node::Int => {
            let v = long(input)?;
            i32::try_from(v).map_err(|_| "an int out of range")?;
            let _ = write!(out, "{v}");
        }
        Node::Long => {
            let _ = write!(out, "{}", long(input)?);
        }
        Node::IntAsFloat { long: is_long } => {
            let v = long(input)?;
            if !is_long {
                i32::try_from(v).map_err(|_| "an int out of range")?;
            }
            number(v as f64, out);
        }
        Node::Float { as_double } => {
            let x = take(input, 4)?;
            let f = f32::from_le_bytes([x[0], x[1], x[2], x[3]]);
            if *as_double {
                number(f as f64, out);
            } else {
                // Non-finite floats have no JSON form: serde_json writes them as null.
                let _ = serde_json::to_writer(&mut *out, &f);
            }
        }
        Node::Double => {
            let b = take(input, 8)?;
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            number(f64::from_le_bytes(a), out);
        }
        Node::Str => {
            let b = sized(input)?;
            let s = std::str::from_utf8(b).map_err(|_| "a string that is not UTF-8")?;
            write_str(s, out);
        }
        Node::Bytes => {
            let b = sized(input)?;
            base64_into(b, out);
        }
        Node::Fixed(n) => base64_into(take(input, *n)?, out),
        Node::Decimal { scale, fixed } => {
            let b = match fixed {
                Some(n) => take(input, *n)?,
                None => sized(input)?,
            };
            decimal(b, *scale, out);
        }
        Node::UuidFixed => {
            let b = take(input, 16)?;
            out.push(b'"');
            for (i, x) in b.iter().enumerate() {
                if matches!(i, 4 | 6 | 8 | 10) {
                    out.push(b'-');
                }
                let _ = write!(out, "{x:02x}");
            }
            out.push(b'"');
        }
        Node::Duration => {
            let b = take(input, 12)?;
            let u = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            let _ = write!(
                out,
                "{{\"months\":{},\"days\":{},\"millis\":{}}}",
                u(0),
                u(4),
                u(8)
            );
        }
        Node::Enum(symbols) => {
            let i = long(input)?;
            let sym = usize::try_from(i)
                .ok()
                .and_then(|i| symbols.get(i))
                .ok_or("an enum index out of range")?;
            out.extend_from_slice(sym.as_ref().map_err(String::clone)?);
        }
        Node::Union(branches) => {
            let i = long(input)?;
            let br = usize::try_from(i)
                .ok()
                .and_then(|i| branches.get(i))
                .ok_or("a union index out of range")?;
            step(br.as_ref().map_err(String::clone)?, input, out, b)?;
        }
        Node::Array(item) => {
            out.push(b'[');
            let mut first = true;
            blocks(input, b, |input, b| {
                if !std::mem::take(&mut first) {
                    out.push(b',');
                }
                step(item, input, out, b)
            })?;
            out.push(b']');
        }
        Node::Map(item) => {
            out.push(b'{');
            let mut first = true;
            blocks(input, b, |input, b| {
                if !std::mem::take(&mut first) {
                    out.push(b',');
                }
                step(&Node::Str, input, out, b)?;
                out.push(b':');
                step(item, input, out, b)
            })?;
            out.push(b'}');
        }
        Node::Record(fields) => {
            out.push(b'{');
            let mut first = true;
            for f in fields {
                let (k, node) = match f {
                    Field::Read(k, node) => (k, node),
                    Field::Skip(node) => {
                        skip(node, input, out, b)?;
                        continue;
                    }
                    Field::Default(kv) => {
                        if !std::mem::take(&mut first) {
                            out.push(b',');
                        }
                        out.extend_from_slice(kv);
                        continue;
                    }
                };
                if !std::mem::take(&mut first) {
                    out.push(b',');
                }
                out.extend_from_slice(k);
                step(node, input, out, b)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// Reads past one datum of `node` (a field the reader drops): read as usual, then taken back
/// off `out`, so skipping is exactly as strict as reading.
fn skip(node: &Node, input: &mut &[u8], out: &mut Vec<u8>, b: &mut Budget) -> Result<(), String> {
    let mark = out.len();
    let res = step(node, input, out, b);
    out.truncate(mark);
    res
}

/// Runs `each` for each item of an array's or map's blocks, every item paid from the datum's
/// budget (a count beyond the bytes left, or beyond the budget, is refused before any item).
fn blocks(
    input: &mut &[u8],
    b: &mut Budget,
    mut each: impl FnMut(&mut &[u8], &mut Budget) -> Result<(), String>,
) -> Result<(), String> {
    loop {
        let n = long(input)?;
        if n == 0 {
            return Ok(());
        }
        if n < 0 {
            // A negative count is followed by the block's size in bytes.
            long(input)?;
        }
        let n = n.unsigned_abs();
        if n > b.items {
            return Err(format!(
                "a block claims {n} items, more than the record can hold"
            ));
        }
        b.items -= n;
        for _ in 0..n {
            each(input, b)?;
        }
    }
}

fn take<'a>(input: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
    if input.len() < n {
        return Err("the datum ends early".into());
    }
    let (head, rest) = input.split_at(n);
    *input = rest;
    Ok(head)
}

/// A zig-zag varint long.
fn long(input: &mut &[u8]) -> Result<i64, String> {
    let mut v: u64 = 0;
    for i in 0..10 {
        let [b, rest @ ..] = *input else {
            return Err("the datum ends early".into());
        };
        *input = rest;
        v |= ((b & 0x7f) as u64) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((v >> 1) as i64 ^ -((v & 1) as i64));
        }
    }
    Err("a varint longer than 10 bytes".into())
}

/// A length-prefixed run of bytes.
fn sized<'a>(input: &mut &'a [u8]) -> Result<&'a [u8], String> {
    let n = long(input)?;
    let n = usize::try_from(n).map_err(|_| "a negative length")?;
    take(input, n)
}

fn number(v: f64, out: &mut Vec<u8>) {
    // Non-finite floats have no JSON form: serde_json writes them as null.
    let _ = serde_json::to_writer(&mut *out, &v);
}

pub(super) fn write_str(s: &str, out: &mut Vec<u8>) {
    let _ = serde_json::to_writer(&mut *out, s);
}

fn base64_into(b: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    out.extend_from_slice(super::base64(b).as_bytes());
    out.push(b'"');
}

/// A two's complement big-endian unscaled value as the JSON number of its scale, written in
/// place (no allocation up to 38 digits).
pub fn decimal(b: &[u8], scale: usize, out: &mut Vec<u8>) {
    if b.len() <= 16 {
        let fill = if b.first().is_some_and(|x| x & 0x80 != 0) {
            0xFF
        } else {
            0
        };
        let mut a = [fill; 16];
        a[16 - b.len()..].copy_from_slice(b);
        let v = i128::from_be_bytes(a);
        if v < 0 {
            out.push(b'-');
        }
        let start = out.len();
        let _ = write!(out, "{}", v.unsigned_abs());
        point(out, start, scale);
    } else {
        let n = num_bigint::BigInt::from_signed_bytes_be(b);
        if n.sign() == num_bigint::Sign::Minus {
            out.push(b'-');
        }
        let start = out.len();
        let _ = write!(out, "{}", n.magnitude());
        point(out, start, scale);
    }
}

/// Places the decimal point `scale` digits from the end of the digits at `out[start..]`.
fn point(out: &mut Vec<u8>, start: usize, scale: usize) {
    if scale == 0 {
        return;
    }
    let digits = out.len() - start;
    if digits <= scale {
        let zeros = std::iter::repeat_n(b'0', scale - digits);
        out.splice(start..start, b"0.".iter().copied().chain(zeros));
    } else {
        out.insert(out.len() - scale, b'.');
    }
}
