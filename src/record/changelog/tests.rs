//! Each encoding against hand-written rows, as Flink writes them.

use super::*;

fn enc(e: ChangelogEncoding, kind: RowKind, line: &str) -> String {
    let mut out = Vec::new();
    e.encode(kind, line.as_bytes(), &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn kinds_round_trip_through_flags_and_codes() {
    use crate::record::event::{RETRACT, UPDATE};
    let all = [
        RowKind::Insert,
        RowKind::UpdateBefore,
        RowKind::UpdateAfter,
        RowKind::Delete,
    ];
    for k in all {
        // Other flag bits do not change the kind.
        assert_eq!(RowKind::of_flags(k.flags() | 1 | 32), k);
        assert_eq!(RowKind::of_code(k.code()), Some(k));
    }
    assert_eq!(
        RowKind::Insert.flags(),
        0,
        "an insert-only stream carries nothing"
    );
    assert_eq!(RowKind::UpdateBefore.flags(), RETRACT | UPDATE);
    assert_eq!(RowKind::of_code(b'x'), None);
    let back: Vec<bool> = all.iter().map(|k| k.is_retraction()).collect();
    assert_eq!(back, [false, true, false, true]);
}

#[test]
fn append_writes_inserts_and_new_values_only() {
    let line = "{\"a\":1}\n";
    assert_eq!(enc(ChangelogEncoding::Append, RowKind::Insert, line), line);
    assert_eq!(
        enc(ChangelogEncoding::Append, RowKind::UpdateAfter, line),
        line
    );
    assert_eq!(
        enc(ChangelogEncoding::Append, RowKind::UpdateBefore, line),
        ""
    );
    assert_eq!(enc(ChangelogEncoding::Append, RowKind::Delete, line), "");
    assert!(!ChangelogEncoding::Append.takes_updates());
}

#[test]
fn print_rows_look_like_flinks() {
    let p = |k, l| enc(ChangelogEncoding::Print, k, l);
    assert_eq!(
        p(
            RowKind::Insert,
            "{\"ad_id\":\"ad-0\",\"n\":5,\"spend\":12.50}\n"
        ),
        "+I[ad-0, 5, 12.50]\n"
    );
    assert_eq!(
        p(
            RowKind::UpdateBefore,
            "{\"k\":null,\"ok\":true,\"f\":1e3}\n"
        ),
        "-U[null, true, 1e3]\n"
    );
    // Escapes unescaped, nested rows in parentheses with their fields in written order, arrays.
    assert_eq!(
        p(
            RowKind::UpdateAfter,
            "{ \"s\" : \"a\\\"b\\u0063\", \"r\":{\"z\":1,\"a\":\"x, y\"},\"l\":[1,[2]] }\n"
        ),
        "+U[a\"bc, (1, x, y), [1, [2]]]\n"
    );
    assert_eq!(p(RowKind::Delete, "{}\n"), "-D[]\n");
    // Not an object (never from an operator): as it is, after the kind.
    assert_eq!(p(RowKind::Insert, "{\"a\":1"), "+I{\"a\":1\n");
    assert_eq!(p(RowKind::Insert, "{\"a\":1}x\n"), "+I{\"a\":1}x\n");
}

#[test]
fn debezium_writes_an_update_as_a_delete_then_a_create() {
    let d = |k, l| enc(ChangelogEncoding::Debezium, k, l);
    let (old, new) = ("{\"k\":\"a\",\"n\":1}\n", "{\"k\":\"a\",\"n\":2}\n");
    assert_eq!(
        d(RowKind::Insert, old),
        "{\"before\":null,\"after\":{\"k\":\"a\",\"n\":1},\"op\":\"c\"}\n"
    );
    assert_eq!(
        d(RowKind::UpdateBefore, old),
        "{\"before\":{\"k\":\"a\",\"n\":1},\"after\":null,\"op\":\"d\"}\n"
    );
    assert_eq!(
        d(RowKind::UpdateAfter, new),
        "{\"before\":null,\"after\":{\"k\":\"a\",\"n\":2},\"op\":\"c\"}\n"
    );
    assert_eq!(
        d(RowKind::Delete, new),
        "{\"before\":{\"k\":\"a\",\"n\":2},\"after\":null,\"op\":\"d\"}\n"
    );
}

#[test]
fn split_kind_reads_the_kind_back_and_takes_a_bare_row_as_an_insert() {
    assert_eq!(
        split_kind(b"u{\"a\":1}\n"),
        (RowKind::UpdateBefore, &b"{\"a\":1}\n"[..])
    );
    assert_eq!(
        split_kind(b"{\"a\":1}\n"),
        (RowKind::Insert, &b"{\"a\":1}\n"[..])
    );
    assert_eq!(split_kind(b""), (RowKind::Insert, &b""[..]));
}

#[test]
fn by_key_prefixes_the_kind() {
    assert_eq!(
        enc(
            ChangelogEncoding::ByKey,
            RowKind::UpdateBefore,
            "{\"a\":1}\n"
        ),
        "u{\"a\":1}\n"
    );
}
