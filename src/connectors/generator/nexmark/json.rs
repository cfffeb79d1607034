//! The NDJSON lines of `sluice loadgen nexmark`: one line per
//! event, fields in nexmark-flink's order and with its names, `dateTime` and `expires` as epoch
//! milliseconds. Appends to the caller's buffer, allocating only if it must grow.

use super::model::{Auction, Bid, NexmarkEvent, Person};
use crate::record::text::{write_i64, write_u64};

/// Appends `event` as one JSON object and `'\n'`.
pub fn write_json(event: &NexmarkEvent<'_>, out: &mut Vec<u8>) {
    match event {
        NexmarkEvent::Person(p) => write_person(p, out),
        NexmarkEvent::Auction(a) => write_auction(a, out),
        NexmarkEvent::Bid(b) => write_bid(b, out),
    }
}

/// `{"id":1000,"name":..,"emailAddress":..,"creditCard":..,"city":..,"state":..,"dateTime":..,
/// "extra":..}`.
pub fn write_person(p: &Person<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"id\":");
    write_u64(p.id, out);
    field_str(b",\"name\":", &p.name, out);
    field_str(b",\"emailAddress\":", &p.email_address, out);
    field_str(b",\"creditCard\":", &p.credit_card, out);
    field_str(b",\"city\":", p.city, out);
    field_str(b",\"state\":", p.state, out);
    out.extend_from_slice(b",\"dateTime\":");
    write_i64(p.date_time, out);
    field_str(b",\"extra\":", p.extra, out);
    out.extend_from_slice(b"}\n");
}

/// `{"id":1000,"itemName":..,"description":..,"initialBid":..,"reserve":..,"dateTime":..,
/// "expires":..,"seller":..,"category":..,"extra":..}`.
pub fn write_auction(a: &Auction<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"id\":");
    write_u64(a.id, out);
    field_str(b",\"itemName\":", &a.item_name, out);
    field_str(b",\"description\":", &a.description, out);
    out.extend_from_slice(b",\"initialBid\":");
    write_u64(a.initial_bid, out);
    out.extend_from_slice(b",\"reserve\":");
    write_u64(a.reserve, out);
    out.extend_from_slice(b",\"dateTime\":");
    write_i64(a.date_time, out);
    out.extend_from_slice(b",\"expires\":");
    write_i64(a.expires, out);
    out.extend_from_slice(b",\"seller\":");
    write_u64(a.seller, out);
    out.extend_from_slice(b",\"category\":");
    write_u64(a.category, out);
    field_str(b",\"extra\":", a.extra, out);
    out.extend_from_slice(b"}\n");
}

/// `{"auction":1000,"bidder":1001,"price":..,"channel":..,"url":..,"dateTime":..,"extra":..}`.
pub fn write_bid(b: &Bid<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"auction\":");
    write_u64(b.auction, out);
    out.extend_from_slice(b",\"bidder\":");
    write_u64(b.bidder, out);
    out.extend_from_slice(b",\"price\":");
    write_u64(b.price, out);
    field_str(b",\"channel\":", b.channel, out);
    field_str(b",\"url\":", b.url, out);
    out.extend_from_slice(b",\"dateTime\":");
    write_i64(b.date_time, out);
    field_str(b",\"extra\":", b.extra, out);
    out.extend_from_slice(b"}\n");
}

/// `key` (already quoted, with its comma and colon), then `s` as a JSON string.
fn field_str(key: &[u8], s: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(key);
    out.push(b'"');
    let bytes = s.as_bytes();
    // The model's strings never need escaping; the check keeps hand-built events valid JSON.
    if bytes.iter().all(|&c| c >= 0x20 && c != b'"' && c != b'\\') {
        out.extend_from_slice(bytes);
    } else {
        escape_into(bytes, out);
    }
    out.push(b'"');
}

/// JSON string escaping of quotes, backslashes and control characters; other bytes (UTF-8
/// included) pass through.
fn escape_into(bytes: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &c in bytes {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            c if c < 0x20 => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(c >> 4)]);
                out.push(HEX[usize::from(c & 0xf)]);
            }
            c => out.push(c),
        }
    }
}
