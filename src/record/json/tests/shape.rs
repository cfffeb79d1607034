//! [`super::super::extract_shaped`] against [`super::super::extract`]: one [`KeyShape`] carried across a
//! sequence of lines whose keys keep, change or break their order and spelling must give every
//! line exactly the tokens and the error the unshaped scan gives it.

use super::super::*;
use proptest::prelude::*;

type Seen = Result<Vec<Option<(TokenKind, usize, usize, bool)>>, JsonError>;

/// A scan's result with each token as (kind, offset in the line, length, has_escape).
fn seen(line: &[u8], r: Result<(), JsonError>, out: &[Option<Token<'_>>]) -> Seen {
    r.map(|()| {
        out.iter()
            .map(|t| {
                t.map(|t| {
                    let at = t.raw.as_ptr() as usize - line.as_ptr() as usize;
                    (t.kind, at, t.raw.len(), t.has_escape)
                })
            })
            .collect()
    })
}

/// Checks every line of `lines` in order through one shape.
fn agree(lines: &[Vec<u8>], names: &[&str]) -> Result<(), String> {
    let fs = FieldSet::new(names);
    let mut shape = KeyShape::new();
    for line in lines {
        let mut a = vec![None; fs.len()];
        let mut b = vec![None; fs.len()];
        let plain = seen(line, extract(line, &fs, &mut a), &a);
        let shaped = seen(line, extract_shaped(line, &fs, &mut shape, &mut b), &b);
        if plain != shaped {
            let shown = String::from_utf8_lossy(line);
            return Err(format!("{shown}: extract {plain:?}, shaped {shaped:?}"));
        }
    }
    Ok(())
}

#[test]
fn keys_that_look_like_the_last_lines_are_matched_only_when_equal() {
    let lines: Vec<Vec<u8>> = [
        r#"{"ad_id":"a","user_id":"u","ts":1,"bid":2}"#,
        r#"{"ad_id":"b","user_id":"v","ts":3,"bid":4}"#,
        r#"{"ad_idx":"c","ad_id":"b","ts":3,"bid":4}"#,
        r#"{"ad_id" :"b","ts":3,"bid":4}"#,
        r#"{"ad\u005fid":"b","ts":3,"bid":4}"#,
        r#"{"ad_id":"a","ad_id":"b"}"#,
        r#"{"ad_id":"a","user_id":"u","ts":1,"bid":2,"bid":3}"#,
        r#"{"ad_id":"a","user_id":"u","ts":1,"bid":"#,
        r#"{"ad_id":"a","user_id":"u","ts":1,"bi"#,
        r#"{"ad_id":"a","user_id":"u","ts":1,"bid":2}"#,
        r#"{"a_very_long_key_name":1,"ad_id":"x"}"#,
        r#"{"a_very_long_key_name":2,"ad_id":"y"}"#,
        r#"{"ad_id":"é","ts":9}"#,
        r#"{"ad_id":"e","ts":9}"#,
        r#"{}"#,
        r#"{"ad_id":"e","ts":9}"#,
    ]
    .iter()
    .map(|l| l.as_bytes().to_vec())
    .collect();
    agree(&lines, &["ts", "ad_id", "bid"]).unwrap();
    // The same lines with keys as wanted names in another order (other slots).
    agree(
        &lines,
        &["bid", "user_id", "ad_id", "ts", "a_very_long_key_name"],
    )
    .unwrap();
}

#[test]
fn a_line_of_the_same_shape_gets_its_own_values() {
    let fs = FieldSet::new(&["ts", "ad_id"]);
    let mut shape = KeyShape::new();
    let mut out = vec![None; 2];
    for (line, ts, ad) in [
        (&br#"{"ad_id":"ad-1","ts":17}"#[..], "17", r#""ad-1""#),
        (br#"{"ad_id":"ad-22","ts":1800}"#, "1800", r#""ad-22""#),
        (br#"{"ad_id":"ad-3","ts":9}"#, "9", r#""ad-3""#),
    ] {
        extract_shaped(line, &fs, &mut shape, &mut out).unwrap();
        assert_eq!(out[0].map(|t| t.raw), Some(ts.as_bytes()));
        assert_eq!(out[1].map(|t| t.raw), Some(ad.as_bytes()));
    }
}

const KEYS: &[&str] = &[
    "ad_id",
    "ts",
    "bid",
    "user_id",
    "a",
    "ad_i",
    "ad_id2",
    "sixteen_bytes_k",
    "x\"y",
    "ü",
];

fn arb_line() -> impl Strategy<Value = Vec<u8>> {
    let field = (
        prop::sample::select(KEYS),
        0u8..4,
        any::<u16>(),
        any::<bool>(),
    );
    prop::collection::vec(field, 0..7).prop_map(|fields| {
        let parts: Vec<String> = fields
            .iter()
            .map(|(k, kind, n, gap)| {
                let key = serde_json::to_string(k).unwrap();
                let colon = if *gap { " : " } else { ":" };
                let value = match kind {
                    0 => n.to_string(),
                    1 => format!("\"v{n}\""),
                    2 => format!("[{n}]"),
                    _ => "null".to_string(),
                };
                format!("{key}{colon}{value}")
            })
            .collect();
        format!("{{{}}}", parts.join(",")).into_bytes()
    })
}

proptest! {
    #[test]
    fn shaped_scan_agrees_with_the_plain_one_on_every_line_of_a_sequence(
        base in arb_line(),
        others in prop::collection::vec((arb_line(), any::<bool>()), 0..6),
        cut in any::<prop::sample::Index>(),
        wanted in prop::sample::subsequence(KEYS, 0..=KEYS.len()),
    ) {
        // Most lines repeat the base shape (the common case); some are other shapes, some cut.
        let mut lines = vec![base.clone()];
        for (line, repeat) in others {
            lines.push(if repeat { base.clone() } else { line });
            lines.push(base.clone());
        }
        let mut short = base.clone();
        short.truncate(cut.index(base.len() + 1));
        lines.push(short);
        lines.push(base);
        let r = agree(&lines, &wanted);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}
