//! Digests (`MD5`, `SHA1`, `SHA2` and the fixed-length SHA-2 functions, each lower-case hex of
//! the string's UTF-8 bytes), encodings (`TO_BASE64`/`FROM_BASE64`, `URL_ENCODE`/`URL_DECODE` as
//! Java's `URLEncoder`/`URLDecoder` in UTF-8, `HEX`, `BIN`) and `PARSE_URL`.

use std::borrow::Cow;
use std::fmt::Write as _;

use base64::Engine as _;
use sha2::Digest as _;

use super::super::functions::Func;
use super::super::ops::OpResult;
use super::super::value::Value;
use super::{int_at, str_at};

fn text<'a>(s: String) -> OpResult<'a> {
    Ok(Value::Str(Cow::Owned(s)))
}

fn hex_lower(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

pub(super) fn call<'a>(func: Func, args: &mut [Value<'a>]) -> OpResult<'a> {
    let s = str_at(args, 0).as_bytes();
    match func {
        Func::Md5 => text(hex_lower(&md5::Md5::digest(s))),
        Func::Sha1 => text(hex_lower(&sha1::Sha1::digest(s))),
        Func::Sha224 => text(hex_lower(&sha2::Sha224::digest(s))),
        Func::Sha256 => text(hex_lower(&sha2::Sha256::digest(s))),
        Func::Sha384 => text(hex_lower(&sha2::Sha384::digest(s))),
        Func::Sha512 => text(hex_lower(&sha2::Sha512::digest(s))),
        // Flink's SHA2: 0 means 256; any other length gives null.
        Func::Sha2 => match int_at(args, 1, 0) {
            224 => text(hex_lower(&sha2::Sha224::digest(s))),
            0 | 256 => text(hex_lower(&sha2::Sha256::digest(s))),
            384 => text(hex_lower(&sha2::Sha384::digest(s))),
            512 => text(hex_lower(&sha2::Sha512::digest(s))),
            _ => Ok(Value::Null),
        },
        Func::ToBase64 => text(base64::engine::general_purpose::STANDARD.encode(s)),
        // Text that is not Base64, or whose bytes are not UTF-8, gives null.
        // Java's decoder takes text without its `=` padding too.
        Func::FromBase64 => Ok(base64::engine::GeneralPurpose::new(
            &base64::alphabet::STANDARD,
            base64::engine::GeneralPurposeConfig::new()
                .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
        )
        .decode(s)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .map_or(Value::Null, |t| Value::Str(Cow::Owned(t)))),
        Func::UrlEncode => text(url_encode(s)),
        Func::UrlDecode => Ok(url_decode(s).map_or(Value::Null, |t| Value::Str(Cow::Owned(t)))),
        Func::Hex => text(match &args[0] {
            Value::Int(n) => format!("{:X}", *n as u64),
            Value::Str(t) => t.bytes().fold(String::new(), |mut out, b| {
                let _ = write!(out, "{b:02X}");
                out
            }),
            // Flink takes integers and strings; a decimal is written by its integer part.
            Value::Decimal(d) => format!("{:X}", d.trunc().mantissa() as u64),
            other => other.to_string(),
        }),
        Func::Bin => text(format!("{:b}", int_at(args, 0, 0) as u64)),
        _ => Ok(Value::Null),
    }
}

/// Java's `URLEncoder.encode(s, UTF_8)`: letters, digits and `.-*_` kept, a space as `+`, every
/// other byte as `%XX`.
fn url_encode(s: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// Java's `URLDecoder.decode(s, UTF_8)`: `+` is a space, `%XX` a byte; a bad escape gives
/// `None` (Flink's null).
fn url_decode(s: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    // Java's `new String(bytes, UTF_8)`: bytes that are not UTF-8 become U+FFFD.
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// `PARSE_URL(url, part [, key])` as Java's `java.net.URL` splits a URL: HOST, PATH, QUERY (or
/// one parameter of it with `key`), REF, PROTOCOL, FILE, AUTHORITY, USERINFO; `None` (null)
/// for a part the URL lacks, an unknown part or a URL without a protocol.
pub(super) fn parse_url(url: &str, part: &str, key: Option<&str>) -> Option<String> {
    let (protocol, rest) = url.split_once("://")?;
    if protocol.is_empty()
        || !protocol
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return None;
    }
    let (rest, reference) = match rest.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (rest, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let host = match hostport.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => hostport,
    };
    let found = match (part, key) {
        ("QUERY", Some(key)) => {
            return query?.split('&').find_map(|pair| {
                let (k, v) = pair.split_once('=')?;
                (k == key).then(|| v.to_string())
            })
        }
        (_, Some(_)) => return None,
        ("HOST", _) => Some(host),
        ("PATH", _) => Some(path),
        ("QUERY", _) => query,
        ("REF", _) => reference,
        ("PROTOCOL", _) => Some(protocol),
        ("AUTHORITY", _) => Some(authority),
        ("USERINFO", _) => userinfo,
        ("FILE", _) => {
            return Some(match query {
                Some(q) => format!("{path}?{q}"),
                None => path.to_string(),
            })
        }
        _ => None,
    };
    found.map(str::to_string)
}
