//! The NDJSON lines of `sluice loadgen flow` (see [`crate::loadgen::flow`]): one appender per
//! stream, each writing one whole line with its `'\n'` and allocating only if `out` must grow.

use crate::connectors::generator::model::write_ad_id;
use crate::record::text::{write_i64, write_u64};

/// `{"imp_id":1,"ad_id":"ad-7","ts":1700000000000}` and `'\n'`.
pub fn write_impression(imp_id: u64, ad: u64, ts: i64, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"imp_id\":");
    write_u64(imp_id, out);
    out.extend_from_slice(b",\"ad_id\":\"");
    write_ad_id(ad, out);
    out.extend_from_slice(b"\",\"ts\":");
    write_i64(ts, out);
    out.extend_from_slice(b"}\n");
}

/// `{"click_id":9,"imp_id":1,"ad_id":"ad-7","ts":1700000004000}` and `'\n'`.
pub fn write_click(click_id: u64, imp_id: u64, ad: u64, ts: i64, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"click_id\":");
    write_u64(click_id, out);
    out.extend_from_slice(b",\"imp_id\":");
    write_u64(imp_id, out);
    out.extend_from_slice(b",\"ad_id\":\"");
    write_ad_id(ad, out);
    out.extend_from_slice(b"\",\"ts\":");
    write_i64(ts, out);
    out.extend_from_slice(b"}\n");
}

/// `{"ad_id":"ad-7","price":1.2345,"ts":1700000000000}` and `'\n'`; `price` is in units of
/// 0.0001 and always printed with four decimals (`2.5000`).
pub fn write_price(ad: u64, price: u32, ts: i64, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"ad_id\":\"");
    write_ad_id(ad, out);
    out.extend_from_slice(b"\",\"price\":");
    write_u64(u64::from(price / 10_000), out);
    let frac = price % 10_000;
    out.extend_from_slice(&[
        b'.',
        b'0' + (frac / 1000) as u8,
        b'0' + (frac / 100 % 10) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
    ]);
    out.extend_from_slice(b",\"ts\":");
    write_i64(ts, out);
    out.extend_from_slice(b"}\n");
}
