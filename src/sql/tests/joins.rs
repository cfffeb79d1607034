//! Joins and deduplication in SQL against hand-derived expectations: the bounds an interval
//! join's conditions give (every way Flink users write them), the keys, the kinds, the versioned
//! table a temporal join needs, the dedupe a ROW_NUMBER query is, and where each refusal points.

use super::{
    compiled, filter, filter_condition, has_run, job, kafka_sink, kafka_source, refusal,
    select_fields, source, transform, window_of, CLICKS,
};
use crate::config::{IntervalJoinKind, TemporalJoinKind, TransformConfig};
use crate::sql::{compile, Compiled};

/// The interval join `name` of `c`.
fn interval_join<'c>(c: &'c Compiled, name: &str) -> &'c crate::config::IntervalJoinConfig {
    match transform(c, name) {
        TransformConfig::IntervalJoin(j) => j,
        other => panic!("{name} is no interval join: {other:?}\n{}", c.toml()),
    }
}

const IMPS: &str = "CREATE TABLE imps (imp_id BIGINT, ad_id STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/imps.ndjson', 'format' = 'json');
CREATE TABLE cl (click_id BIGINT, imp BIGINT, imp_id BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/cl.ndjson', 'format' = 'json');
CREATE TABLE o (ad_id STRING, click_id BIGINT) WITH ('connector' = 'print');
";

const PRICES: &str = "CREATE TABLE prices (ad_id STRING, price DECIMAL(10, 4), ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND,
  PRIMARY KEY (ad_id) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = 'data/prices.ndjson', 'format' = 'json');
CREATE TABLE priced (ad_id STRING, bid BIGINT, price DECIMAL(10, 4)) WITH ('connector' = 'print');
";

/// The interval join of `INSERT INTO o SELECT i.ad_id, c.click_id FROM <from>`.
fn interval(from: &str) -> crate::config::IntervalJoinConfig {
    let cfg = job(&format!(
        "{IMPS}INSERT INTO o SELECT i.ad_id, c.click_id FROM {from}"
    ));
    match &cfg.transforms["insert_1_o_join"] {
        TransformConfig::IntervalJoin(j) => j.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn interval_join_bounds_are_read_from_every_spelling() {
    let cases = [
        ("imps i JOIN cl c ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '10' SECOND", (0, 10_000)),
        ("imps i JOIN cl c ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt - INTERVAL '5' SECOND AND i.rt + INTERVAL '1' MINUTE", (-5_000, 60_000)),
        // The left's time between the right's: right - left is the negation.
        ("imps i JOIN cl c ON c.imp_id = i.imp_id AND i.rt BETWEEN c.rt - INTERVAL '10' SECOND AND c.rt", (0, 10_000)),
        ("imps i JOIN cl c ON i.imp_id = c.imp_id AND c.rt >= i.rt AND c.rt < i.rt + INTERVAL '10' SECOND", (0, 9_999)),
        ("imps i JOIN cl c ON i.imp_id = c.imp_id AND i.rt < c.rt AND i.rt + INTERVAL '2' SECOND >= c.rt", (1, 2_000)),
        ("imps i, cl c WHERE i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '10' SECOND", (0, 10_000)),
        ("imps AS i INNER JOIN cl AS c ON i.imp_id = c.imp_id AND c.rt = i.rt", (0, 0)),
    ];
    for (from, (lo, hi)) in cases {
        let j = interval(from);
        assert_eq!((j.between[0].0, j.between[1].0), (lo, hi), "{from}");
        assert_eq!(j.on, vec!["imp_id".to_string()], "{from}");
        assert_eq!(
            (j.left.as_str(), j.right.as_str()),
            ("imps", "cl"),
            "{from}"
        );
    }
}

#[test]
fn interval_join_kinds_keys_and_filters() {
    for (word, kind) in [
        ("JOIN", IntervalJoinKind::Inner),
        ("LEFT JOIN", IntervalJoinKind::Left),
        ("RIGHT OUTER JOIN", IntervalJoinKind::Right),
        ("FULL OUTER JOIN", IntervalJoinKind::Full),
    ] {
        let j = interval(&format!("imps i {word} cl c ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '1' SECOND"));
        assert_eq!(j.kind, kind, "{word}");
    }
    // Keys under different names: each side gets the key as `_k0` from a select before the join.
    let sql = format!("{IMPS}INSERT INTO o SELECT i.ad_id, c.click_id FROM imps i JOIN cl c ON i.imp_id = c.imp AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '1' SECOND WHERE c.click_id > 3");
    let c = compiled(&sql);
    let toml = c.toml();
    let j = interval_join(&c, "insert_1_o_join");
    assert_eq!(j.on, ["_k0"], "{toml}");
    assert!(
        has_run(select_fields(&c, &j.right), &[("_k0", "imp")]),
        "{toml}"
    );
    // A condition on one side of an inner join filters that side before the join.
    let f = filter(&c, "insert_1_o_rwhere");
    assert_eq!(
        (f.inputs.as_slice(), f.condition.as_str()),
        (&["cl".to_string()][..], "((click_id > 3))"),
        "{toml}"
    );
    job(&sql);
}

#[test]
fn a_window_over_a_joined_view_reads_the_time_the_pair_carries() {
    // Bounds [0, 10 s]: the click is never earlier, so the pair carries the click's time and the
    // view keeps `c.rt` as its time attribute; with [-1 s, 1 s] neither side's time is the pair's.
    let view = |bounds: &str| {
        format!("{IMPS}CREATE TABLE w (ad_id STRING, window_start TIMESTAMP(3), n BIGINT) WITH ('connector' = 'print');
CREATE VIEW m AS SELECT i.ad_id, c.rt FROM imps i JOIN cl c ON i.imp_id = c.imp_id AND c.rt BETWEEN {bounds};
INSERT INTO w SELECT ad_id, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE m, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end")
    };
    job(&view("i.rt AND i.rt + INTERVAL '10' SECOND"));
    let (_, _, m) = refusal(&view(
        "i.rt - INTERVAL '1' SECOND AND i.rt + INTERVAL '1' SECOND",
    ));
    assert!(m.contains("is not the time attribute of `m`"), "{m}");
}

#[test]
fn temporal_join_on_a_versioned_table() {
    let sql = |kind: &str, on: &str| {
        format!("{CLICKS}{PRICES}INSERT INTO priced SELECT c.ad_id, c.bid, p.price FROM clicks AS c {kind} prices FOR SYSTEM_TIME AS OF c.rt AS p ON {on}")
    };
    for (word, kind) in [
        ("JOIN", TemporalJoinKind::Inner),
        ("LEFT JOIN", TemporalJoinKind::Left),
    ] {
        let cfg = job(&sql(word, "c.ad_id = p.ad_id"));
        let TransformConfig::TemporalJoin(j) = &cfg.transforms["insert_1_priced_join"] else {
            panic!();
        };
        assert_eq!(j.kind, kind);
        assert_eq!((j.input.as_str(), j.table.as_str()), ("clicks", "prices"));
        assert_eq!(
            (j.on.input.as_str(), j.on.table.as_str()),
            ("ad_id", "ad_id")
        );
    }
    let c = compiled(&sql("JOIN", "p.ad_id = c.ad_id"));
    assert!(
        has_run(
            select_fields(&c, "insert_1_priced"),
            &[("price", "table.price")]
        ),
        "{}",
        c.toml()
    );
    let no_pk =
        sql("JOIN", "c.ad_id = p.ad_id").replace(",\n  PRIMARY KEY (ad_id) NOT ENFORCED", "");
    let (_, _, m) = refusal(&no_pk);
    assert!(m.contains("not a versioned table"), "{m}");
    let (_, _, m) = refusal(&sql("JOIN", "c.ad_id = p.price"));
    assert!(
        m.contains("must equate `prices`'s primary key (ad_id)"),
        "{m}"
    );
    let (_, _, m) = refusal(&sql("FULL OUTER JOIN", "c.ad_id = p.ad_id"));
    assert!(m.contains("JOIN and LEFT JOIN"), "{m}");
}

const DEDUPE: &str = "CREATE TABLE u (ad_id STRING, user_id BIGINT, bid BIGINT, ts BIGINT) WITH ('connector' = 'print');
INSERT INTO u SELECT ad_id, user_id, bid, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY rt ASC) AS rn FROM clicks
) WHERE rn = 1 AND bid > 2";

#[test]
fn row_number_first_row_is_a_dedupe_with_the_state_ttl_as_horizon() {
    let sql = format!("SET 'table.exec.state.ttl' = '10 min';\nSET 'parallelism.default' = '2';\n{CLICKS}{DEDUPE}");
    let cfg = job(&sql);
    let TransformConfig::Dedupe(d) = &cfg.transforms["insert_1_u_dedupe"] else {
        panic!("{:?}", cfg.transforms.keys());
    };
    assert_eq!(d.key, vec!["user_id".to_string()]);
    assert_eq!(d.horizon.as_millis(), 600_000);
    assert_eq!(d.inputs, vec!["insert_1_u_rows".to_string()]);
    let c = compiled(&sql);
    assert_eq!(
        filter_condition(&c, "insert_1_u_where"),
        "((bid > 2))",
        "{}",
        c.toml()
    );
    for rn in ["rn <= 1", "1 = rn", "rn < 2"] {
        job(&sql.replace("rn = 1", rn));
    }
}

#[test]
fn join_dedupe_and_set_refusals_point_at_line_and_column() {
    let ttl = "SET 'table.exec.state.ttl' = '1 h';\n";
    let cases: Vec<(String, (u64, u64), &str)> = vec![
        (format!("{IMPS}INSERT INTO o SELECT i.ad_id, c.click_id FROM imps i JOIN cl c ON i.imp_id = c.imp_id AND c.rt >= i.rt"), (8, 67), "needs bounds on both sides"),
        (format!("{IMPS}INSERT INTO o SELECT i.ad_id, c.click_id FROM imps i JOIN cl c ON c.rt BETWEEN i.rt AND i.rt + INTERVAL '1' SECOND"), (8, 67), "needs an equality"),
        (format!("{IMPS}INSERT INTO o SELECT i.ad_id, c.click_id FROM imps i LEFT JOIN cl c ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '1' SECOND AND c.click_id > i.imp_id"), (8, 149), "in an outer join, a condition in ON that reads both sides"),
        (format!("{IMPS}INSERT INTO o SELECT nope, click_id FROM imps i JOIN cl c ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '1' SECOND"), (8, 22), "no column `nope` on either side of the join (i, c)"),
        (format!("{IMPS}INSERT INTO o SELECT i.ad_id, imp_id FROM imps i JOIN cl c ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '1' SECOND"), (8, 31), "on both sides of the join"),
        (format!("{CLICKS}{}", DEDUPE.replace("'connector' = 'print'", "'connector' = 'filesystem', 'path' = 'u', 'format' = 'json'")), (7, 1), "`u` takes appends only, but this query's result is updating"),
        (format!("{ttl}{CLICKS}{}", DEDUPE.replace("'connector' = 'print'", "'connector' = 'filesystem', 'path' = 'u', 'format' = 'json'").replace("rt ASC", "rt DESC")), (8, 1), "`u` takes appends only"),
        (format!("{ttl}{CLICKS}{}", DEDUPE.replace("rt ASC", "bid ASC NULLS FIRST")), (9, 62), "NULLS FIRST/LAST is"),
        (format!("{ttl}{CLICKS}{}", DEDUPE.replace("rn = 1 AND ", "")), (8, 15), "a Top-N needs WHERE rn <= N"),
        ("SET 'state.backend.type' = 'rocksdb';".into(), (1, 5), "the option `state.backend.type` is not supported"),
        ("SET 'table.exec.state.ttl' = 'soon';".into(), (1, 30), "is not a duration"),
        ("SET 'execution.runtime-mode' = 'batch';".into(), (1, 32), "streaming mode only"),
    ];
    let mut wrong = Vec::new();
    for (sql, (line, column), message) in cases {
        let (l, c, m) = refusal(&sql);
        if !m.contains(message) || (l, c) != (line, column) {
            wrong.push(format!(
                "want {line}:{column} {message:?}, got {l}:{c} {m:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn cast_maps_to_the_expression_languages_casts() {
    let sql = format!("{CLICKS}CREATE TABLE c (a STRING, b BIGINT, d DECIMAL(10, 2), e STRING, t TIMESTAMP(3)) WITH ('connector' = 'print');
INSERT INTO c SELECT CAST(bid AS STRING), CAST(ad_id AS BIGINT), CAST(bid AS DECIMAL(10, 2)), CAST(CAST(bid AS DECIMAL(8, 3)) AS VARCHAR), CAST(rt AS TIMESTAMP(3)) FROM clicks");
    let c = compiled(&sql);
    let fields = select_fields(&c, "insert_1_c");
    for want in [
        ("a", "to_string(bid)"),
        ("b", "to_int(ad_id)"),
        // NULL past the precision, as Flink's CAST gives: 8 integer digits at most.
        ("d", "(coalesce(abs(to_decimal(bid, 2)) < 100000000, true) ? (to_decimal(bid, 2)) : null)"),
        ("e", "to_string(to_decimal((coalesce(abs(to_decimal(bid, 3)) < 100000, true) ? (to_decimal(bid, 3)) : null), 3))"),
        ("t", "sql_timestamp(ts)"),
    ] {
        assert!(has_run(fields, &[want]), "{want:?} not in\n{}", c.toml());
    }
    job(&sql);
    // The parser's span of a CAST starts at the value cast.
    for (cast, why, column) in [
        ("CAST(rt AS DOUBLE)", "CAST to DOUBLE from this type", 27),
        ("CAST(rt AS STRING)", "CAST of a timestamp to a string", 27),
        ("CAST(rt AS BIGINT)", "CAST of a timestamp to a number", 27),
        (
            "CAST(ad_id AS CHAR(3))",
            "CAST to CHAR(n) (padded with spaces) is not supported",
            27,
        ),
        (
            "TRY_CAST(rt AS BIGINT)",
            "CAST of a timestamp to a number",
            31,
        ),
    ] {
        let (l, c, m) = refusal(&format!("{CLICKS}CREATE TABLE c (a STRING) WITH ('connector' = 'print');\nINSERT INTO c SELECT {cast} FROM clicks"));
        assert!(m.contains(why), "{cast}: {m}");
        assert_eq!((l, c), (7, column), "{cast}: {m}");
    }
}

const TOPN: &str = "CREATE TABLE t (ws TIMESTAMP(3), ad_id STRING, spend BIGINT, rn BIGINT) WITH ('connector' = 'print');
INSERT INTO t SELECT window_start, ad_id, spend, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY spend DESC, ad_id) AS rn
  FROM (SELECT window_start, window_end, ad_id, SUM(bid) AS spend
        FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
        GROUP BY window_start, window_end, ad_id)
) WHERE rn <= 3";

#[test]
fn window_top_n_is_a_top_n_over_the_window() {
    let sql = format!("{CLICKS}{TOPN}");
    let cfg = job(&sql);
    let TransformConfig::TopN(t) = &cfg.transforms["insert_1_t_top_n"] else {
        panic!("{:?}", cfg.transforms.keys());
    };
    assert_eq!(t.partition_by, ["window_start", "window_end"]);
    assert_eq!(t.order_by, ["spend desc", "ad_id"]);
    assert_eq!((t.n, t.rank_field.as_deref()), (3, Some("rn")));
    for (cond, n) in [("rn < 3", 2), ("rn = 1", 1), ("3 >= rn AND spend > 10", 3)] {
        let cfg = job(&sql.replace("rn <= 3", cond));
        let TransformConfig::TopN(t) = &cfg.transforms["insert_1_t_top_n"] else {
            panic!();
        };
        assert_eq!(t.n, n, "{cond}");
    }
    let (_, _, m) = refusal(&sql.replace("rn <= 3", "rn > 3"));
    assert!(m.contains("needs WHERE rn <= N"), "{m}");
    let raw = format!("{CLICKS}CREATE TABLE t (ad_id STRING, rn BIGINT) WITH ('connector' = 'print');
INSERT INTO t SELECT ad_id, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY bid DESC) AS rn
  FROM (SELECT ad_id, bid, rt AS window_start, rt AS window_end FROM clicks)) WHERE rn <= 3");
    let (_, _, m) = refusal(&raw);
    assert!(m.contains("ranks a window aggregation's results"), "{m}");
}

#[test]
fn avg_of_an_integer_column_is_an_integer_as_in_flink() {
    let sql = format!("{CLICKS}CREATE TABLE a (m BIGINT, d BIGINT) WITH ('connector' = 'print');
INSERT INTO a SELECT AVG(bid), AVG(bid) + 1 FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end");
    let c = compiled(&sql);
    let toml = c.toml();
    assert_eq!(
        window_of(&c, "insert_1_a_window").aggregates.0,
        [("_a0".to_string(), "avg(bid)".to_string())],
        "{toml}"
    );
    assert!(
        has_run(
            select_fields(&c, "insert_1_a"),
            &[("m", "to_int(_a0)"), ("d", "(to_int(_a0) + 1)")]
        ),
        "{toml}"
    );
    job(&sql);
}

const HINTED: &str = "CREATE TABLE o (ad_id STRING, n BIGINT) WITH ('connector' = 'print');
CREATE TABLE late (ad_id STRING) WITH ('connector' = 'print');
INSERT INTO o SELECT ad_id, COUNT(*)
FROM TABLE(TUMBLE(TABLE clicks /*+ OPTIONS(HINT) */, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
GROUP BY ad_id, window_start, window_end";

/// A window grouped by nothing but its window is one key: two-phase unless a hint says
/// otherwise; windows with keys, sessions and windows over other operators are left alone.
#[test]
fn a_window_with_one_group_per_window_is_two_phase_by_default() {
    let hot = |sql: &str| -> Vec<crate::config::HotKeyMode> {
        let cfg = job(&format!("{CLICKS}{sql}"));
        cfg.transforms
            .values()
            .filter_map(|t| match t {
                TransformConfig::Window(w) => Some(w.hot_keys.mode),
                _ => None,
            })
            .collect()
    };
    use crate::config::HotKeyMode::{Off, Salt};
    let global = "CREATE TABLE o (n BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE clicks HINT, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
WHERE ad_id <> 'x' GROUP BY window_start, window_end";
    assert_eq!(hot(&global.replace("HINT", "")), [Salt]);
    let off = "/*+ OPTIONS('sluice.hot_keys'='off') */";
    assert_eq!(hot(&global.replace("HINT", off)), [Off]);
    assert_eq!(hot(&HINTED.replace(" /*+ OPTIONS(HINT) */", "")), [Off]);
    let rollup = "CREATE TABLE o (n BIGINT) WITH ('connector' = 'print');
CREATE VIEW per_ad AS SELECT ad_id, COUNT(*) AS n, window_time AS wt FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end, window_time;
INSERT INTO o SELECT SUM(n) FROM TABLE(TUMBLE(TABLE per_ad, DESCRIPTOR(wt), INTERVAL '1' HOUR)) GROUP BY window_start, window_end";
    assert_eq!(hot(rollup), [Off, Off]);
}

#[test]
fn sluice_hints_set_the_window_of_the_table_they_follow() {
    let sql = format!("{CLICKS}{}", HINTED.replace("HINT", "'sluice.hot_keys'='salt', 'sluice.hot_keys.salt'='4', 'sluice.allowed_lateness'='10 s', 'sluice.late_events'='late'"));
    let cfg = job(&sql);
    let w = match &cfg.transforms["insert_1_o_window"] {
        TransformConfig::Window(w) => w,
        other => panic!("{other:?}"),
    };
    assert_eq!(w.allowed_lateness.as_millis(), 10_000);
    assert_eq!(w.late_events.as_deref(), Some("insert_1_o_window_late"));
    let hot = w.hot_keys;
    assert_eq!(
        (hot.mode, hot.salt),
        (crate::config::HotKeyMode::Salt, Some(4))
    );
    let crate::config::SinkConfig::Stdout(late) = &cfg.sinks["late"] else {
        panic!();
    };
    assert_eq!(late.inputs, ["insert_1_o_window_late"]);
    // Hints nowhere near a window, on the wrong name, or with other options are refused.
    for (hint, want) in [
        ("'sluice.hot_keys'='hot'", "expected off, salt or auto"),
        ("'sluice.nope'='1'", "unknown sluice option"),
        (
            "'scan.startup.mode'='latest-offset'",
            "dynamic table options other than sluice.*",
        ),
        ("'sluice.late_events'='nowhere'", "no table `nowhere`"),
        ("'sluice.allowed_lateness'='soon'", "expected a duration"),
    ] {
        let (l, c, m) = refusal(&format!("{CLICKS}{}", HINTED.replace("HINT", hint)));
        assert!(m.contains(want), "{hint}: {m}");
        assert_eq!((l, c), (9, 32), "{hint}");
    }
    let plain = format!(
        "{CLICKS}CREATE TABLE p (ad_id STRING) WITH ('connector' = 'print');
INSERT INTO p SELECT ad_id FROM clicks /*+ OPTIONS('sluice.hot_keys'='auto') */"
    );
    let (_, _, m) = refusal(&plain);
    assert!(m.contains("applies to nothing"), "{m}");
    let (_, _, m) = refusal(&format!(
        "{CLICKS}CREATE TABLE p (ad_id STRING) WITH ('connector' = 'print');
INSERT INTO p SELECT /*+ STATE_TTL('clicks'='1d') */ ad_id FROM clicks"
    ));
    assert!(m.contains("right after a table's name"), "{m}");
    let (_, _, m) = refusal(&format!(
        "{CLICKS}{}",
        HINTED.replace("OPTIONS(HINT)", "BROADCAST(clicks)")
    ));
    assert!(m.contains("the hint BROADCAST is not supported"), "{m}");
}

#[test]
fn datagen_is_the_click_generator_and_json_options_are_taken() {
    let gen = "CREATE TABLE g (ad_id STRING, bid BIGINT, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND) WITH ('connector' = 'datagen', 'number-of-rows' = '5000', 'rows-per-second' = '100000');
CREATE TABLE o (ad_id STRING) WITH ('connector' = 'print');
INSERT INTO o SELECT ad_id FROM g";
    let cfg = job(gen);
    let crate::config::SourceConfig::Generator(g) = &cfg.sources["g"] else {
        panic!("{:?}", cfg.sources["g"]);
    };
    assert_eq!(
        (g.count, g.rate_limit.as_deref()),
        (Some(5000), Some("100000/s"))
    );
    let (_, _, m) = refusal(&gen.replace("bid BIGINT", "price DOUBLE"));
    assert!(m.contains("column `price` is not one of them"), "{m}");
    let (_, _, m) = refusal(&gen.replace(
        "'number-of-rows'",
        "'fields.bid.min' = '1', 'number-of-rows'",
    ));
    assert!(
        m.contains("'fields.bid.min': not supported for connector 'datagen'"),
        "{m}"
    );
    let json = format!("{CLICKS}CREATE TABLE o (ad_id STRING) WITH ('connector' = 'print');
INSERT INTO o SELECT ad_id FROM clicks").replace("'format' = 'json'", "'format' = 'json', 'json.ignore-parse-errors' = 'true', 'json.fail-on-missing-field' = 'false'");
    job(&json);
    let (_, _, m) = refusal(&json.replace(
        "'json.fail-on-missing-field' = 'false'",
        "'json.fail-on-missing-field' = 'true'",
    ));
    assert!(m.contains("only 'false' is supported"), "{m}");
}

#[test]
fn upsert_kafka_is_a_keyed_changelog_read_and_a_keyed_topic_written() {
    let sql = format!("{CLICKS}CREATE TABLE rates (ad_id STRING, price DECIMAL(10, 4), ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt, PRIMARY KEY (ad_id) NOT ENFORCED
) WITH ('connector' = 'upsert-kafka', 'topic' = 'rates', 'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE spend (ad_id STRING, price DECIMAL(10, 4), PRIMARY KEY (ad_id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 'spend', 'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json', 'value.format' = 'json', 'properties.linger.ms' = '5');
INSERT INTO spend SELECT c.ad_id, r.price FROM clicks AS c JOIN rates FOR SYSTEM_TIME AS OF c.rt AS r ON c.ad_id = r.ad_id");
    use crate::connectors::kafka::config::{KafkaStartConfig, KafkaStartName};
    use crate::connectors::kafka::{KafkaChangelog, KafkaKeyFormat};
    let c = compiled(&sql);
    let toml = c.toml();
    let rates = kafka_source(&c, "rates");
    assert_eq!(
        (rates.changelog, rates.key_format, rates.start.clone()),
        (
            KafkaChangelog::Upsert,
            KafkaKeyFormat::Json,
            Some(KafkaStartConfig::Named(KafkaStartName::Earliest))
        ),
        "{toml}"
    );
    let spend = kafka_sink(&c, "spend");
    assert_eq!(
        (spend.topic.as_str(), spend.key.as_slice()),
        ("spend", &["ad_id".to_string()][..]),
        "{toml}"
    );
    assert_eq!(
        spend.options,
        [("linger.ms".to_string(), "5".to_string())].into(),
        "{toml}"
    );
    job(&sql);
    let (_, _, m) = refusal(&sql.replace(", PRIMARY KEY (ad_id) NOT ENFORCED)\n", ")\n"));
    assert!(
        m.contains("an upsert-kafka table needs a PRIMARY KEY"),
        "{m}"
    );
    let (_, _, m) = refusal(&sql.replacen("'value.format' = 'json'", "'value.format' = 'avro'", 1));
    assert!(m.contains("'avro' is not supported yet"), "{m}");
}

/// Compiles `sql` or gives its refusal's message.
fn outcome(sql: &str) -> Result<Compiled, String> {
    compile(sql).map_err(|e| e.message)
}

#[test]
fn review_cases_compile_right_or_are_refused_without_a_panic() {
    let ij = |cond: &str| {
        format!("{IMPS}INSERT INTO o SELECT i.ad_id, c.click_id FROM imps i JOIN cl c ON i.imp_id = c.imp_id AND {cond}")
    };
    // Intervals too large for milliseconds: refused, never an overflow.
    for cond in [
        "c.rt BETWEEN i.rt AND i.rt + INTERVAL '9223372036854775807' MILLISECOND + INTERVAL '1' MILLISECOND",
        "c.rt - INTERVAL '9223372036854775807' MILLISECOND <= i.rt + INTERVAL '9223372036854775807' MILLISECOND AND c.rt >= i.rt",
        "c.rt > i.rt + INTERVAL '9223372036854775807' MILLISECOND AND c.rt <= i.rt",
        "c.rt BETWEEN i.rt AND i.rt + INTERVAL '99999999999999999999999' DAY",
    ] {
        let m = outcome(&ij(cond)).expect_err(cond);
        assert!(m.contains("too long") || m.contains("too far"), "{cond}: {m}");
    }
    let m = outcome(&ij(
        "c.rt > i.rt + INTERVAL '10' SECOND AND c.rt <= i.rt + INTERVAL '5' SECOND",
    ))
    .unwrap_err();
    assert!(m.contains("leave nothing to join"), "{m}");
    // A key named `right` is carried as `_k0`, not next to the `right` side.
    let keyed = IMPS
        .replace("imp_id BIGINT, ad_id", "right BIGINT, ad_id")
        .replace("imp BIGINT, imp_id BIGINT", "imp BIGINT, right BIGINT");
    let c = compiled(&format!("{keyed}INSERT INTO o SELECT i.ad_id, c.click_id FROM imps i JOIN cl c ON i.`right` = c.`right` AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '1' SECOND"));
    assert_eq!(
        interval_join(&c, "insert_1_o_join").on,
        ["_k0"],
        "{}",
        c.toml()
    );
    // A LEFT join's right side may be NULL: its time is no time attribute of the result.
    let m = outcome(&format!("{IMPS}CREATE TABLE w (n BIGINT) WITH ('connector' = 'print');
CREATE VIEW m AS SELECT i.ad_id, c.rt FROM imps i LEFT JOIN cl c ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '10' SECOND;
INSERT INTO w SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE m, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end")).unwrap_err();
    assert!(m.contains("is not the time attribute of `m`"), "{m}");
    // A subquery side with a computed column: its select and the side's select have two names.
    job(&format!("{IMPS}INSERT INTO o SELECT i.ad_id, c.click_id FROM (SELECT imp_id, ad_id, rt, imp_id + 1 AS nxt FROM imps) AS i JOIN cl c ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '1' SECOND"));
    // A view named like a part of another view (one that computes, so it is a transform: a view
    // that only keeps fields is none).
    let m = outcome(&format!("{IMPS}CREATE VIEW v_join AS SELECT ad_id, imp_id + 1 AS n FROM imps;
CREATE VIEW v AS SELECT i.ad_id, c.click_id FROM imps i JOIN cl c ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '1' SECOND;
INSERT INTO o SELECT ad_id, click_id FROM v")).unwrap_err();
    assert!(
        m.contains("two parts of this job would both be named \"v_join\""),
        "{m}"
    );
    // A temporal join's input with a column named `table`.
    let m = outcome(&format!("{}{PRICES}INSERT INTO priced SELECT c.ad_id, c.bid, p.price FROM clicks AS c JOIN prices FOR SYSTEM_TIME AS OF c.rt AS p ON c.ad_id = p.ad_id", CLICKS.replace("user_id BIGINT", "`table` BIGINT"))).unwrap_err();
    assert!(m.contains("has a column named `table`"), "{m}");
    // Decimal scales sluice cannot hold.
    let m = outcome(&format!(
        "{CLICKS}CREATE TABLE d (x DECIMAL(38, 30)) WITH ('connector' = 'print');
INSERT INTO d SELECT CAST(bid AS DECIMAL(38, 30)) FROM clicks"
    ))
    .unwrap_err();
    assert!(m.contains("a scale of at most 28"), "{m}");
}

#[test]
fn rank_bounds_read_either_way_round_and_the_tightest_wins() {
    let top = |cond: &str| {
        let cfg = job(&format!("{CLICKS}{TOPN}").replace("rn <= 3", cond));
        let TransformConfig::TopN(t) = &cfg.transforms["insert_1_t_top_n"] else {
            panic!();
        };
        let filtered = cfg.transforms.contains_key("insert_1_t_where");
        (t.n, filtered)
    };
    assert_eq!(top("rn <= 5 AND rn <= 3"), (3, false));
    // `3 <= rn` is a lower bound: ranks 3 to 5, the lower bound a filter on the rank.
    assert_eq!(top("3 <= rn AND rn <= 5"), (5, true));
    assert_eq!(top("5 >= rn"), (5, false));
    let m = outcome(&format!("{CLICKS}{TOPN}").replace("rn <= 3", "3 <= rn")).unwrap_err();
    assert!(m.contains("needs WHERE rn <= N"), "{m}");
    let m = outcome(&format!("{CLICKS}{TOPN}").replace("rn <= 3", "rn <= 20000")).unwrap_err();
    assert!(m.contains("at most 10000 rows"), "{m}");
    let ttl = "SET 'table.exec.state.ttl' = '1 h';\n";
    let m = outcome(&format!("{ttl}{CLICKS}{DEDUPE}").replace("rn = 1", "1 <= rn")).unwrap_err();
    assert!(m.contains("a Top-N needs WHERE rn <= N"), "{m}");
    let m = outcome(&format!("{ttl}{CLICKS}{DEDUPE} GROUP BY ad_id")).unwrap_err();
    assert!(m.contains("GROUP BY over a ROW_NUMBER query"), "{m}");
    let m = outcome(
        &format!("{ttl}{CLICKS}{DEDUPE}")
            .replace("AS rn", "AS bid")
            .replace("rn = 1", "bid = 1"),
    )
    .unwrap_err();
    assert!(m.contains("has the name of a column it ranks"), "{m}");
}

#[test]
fn statement_sets_the_sql_clients_way_and_the_idle_timeout() {
    let sql = format!("SET 'table.exec.source.idle-timeout' = '10 s';\n{CLICKS}CREATE TABLE o (ad_id STRING) WITH ('connector' = 'print');
BEGIN STATEMENT SET;
INSERT INTO o SELECT ad_id FROM clicks;
INSERT INTO o SELECT ad_id FROM clicks WHERE bid > 1;
END;");
    let c = compiled(&sql);
    let toml = c.toml();
    assert_eq!(
        source(&c, "clicks").watermark().idle_timeout.as_millis(),
        10_000,
        "{toml}"
    );
    assert!(
        c.transforms
            .iter()
            .any(|(n, _)| n.starts_with("insert_2_o")),
        "{toml}"
    );
    job(&sql);
    let late = format!(
        "{CLICKS}CREATE TABLE o (ad_id STRING) WITH ('connector' = 'print');
INSERT INTO o SELECT ad_id FROM clicks;
SET 'table.exec.source.idle-timeout' = '10 s';"
    );
    assert!(outcome(&late)
        .unwrap_err()
        .contains("before the first query"));
}

#[test]
fn kafka_startup_by_timestamp_or_offsets_and_bounded_by_timestamp() {
    let table = |opts: &str| {
        format!("CREATE TABLE k (ad_id STRING, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt)
  WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json'{opts});
CREATE TABLE o (ad_id STRING) WITH ('connector' = 'print');
INSERT INTO o SELECT ad_id FROM k")
    };
    use crate::connectors::kafka::config::{KafkaStartConfig, KafkaStopAt};
    use crate::connectors::kafka::KafkaSourceConfig;
    type Want = fn(&KafkaSourceConfig) -> bool;
    let cases: [(&str, &str, Want); 3] = [
        (", 'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '1700000000000'", "start = { timestamp = \"2023-11-14T22:13:20.000Z\" }",
            |k| k.start == Some(KafkaStartConfig::Timestamp { timestamp: "2023-11-14T22:13:20.000Z".into() })),
        (", 'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0,offset:42;partition:1,offset:300'", "start = { offsets = { \"0\" = 42, \"1\" = 300 } }",
            |k| k.start == Some(KafkaStartConfig::Offsets { offsets: [("0".to_string(), 42), ("1".to_string(), 300)].into() })),
        (", 'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp-millis' = '1700000000000'", "stop_at = { timestamp = \"2023-11-14T22:13:20.000Z\" }",
            |k| k.stop_at == KafkaStopAt::Timestamp { timestamp: "2023-11-14T22:13:20.000Z".into() }),
    ];
    for (opts, want, holds) in cases {
        let sql = table(opts);
        let c = compile(&sql).unwrap_or_else(|e| panic!("{opts}: {e}"));
        assert!(
            holds(kafka_source(&c, "k")),
            "{want} does not hold in\n{}",
            c.toml()
        );
        job(&sql);
    }
    for (opts, why) in [
        (", 'scan.startup.mode' = 'timestamp'", "needs the option 'scan.startup.timestamp-millis'"),
        (", 'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = 'soon'", "is not epoch milliseconds"),
        (", 'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0'", "expected partition:N,offset:M"),
    ] {
        let (_, _, m) = refusal(&table(opts));
        assert!(m.contains(why), "{opts}: {m}");
    }
}

#[test]
fn a_window_join_is_an_interval_join_of_two_window_results_at_bounds_zero() {
    let side = |t: &str| {
        format!("(SELECT ad_id, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE {t}, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end)")
    };
    let sql = format!(
        "{IMPS}CREATE TABLE wj (ad_id STRING, a BIGINT, b BIGINT) WITH ('connector' = 'print');
INSERT INTO wj SELECT L.ad_id, L.n, R.n FROM {} L FULL OUTER JOIN {} R
  ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.ad_id = R.ad_id",
        side("imps"),
        side("imps")
    );
    let cfg = job(&sql);
    let TransformConfig::IntervalJoin(j) = &cfg.transforms["insert_1_wj_join"] else {
        panic!("{:?}", cfg.transforms.keys());
    };
    assert_eq!(j.on, ["window_start", "window_end", "ad_id"]);
    assert_eq!(
        (j.between[0].0, j.between[1].0, j.kind),
        (0, 0, IntervalJoinKind::Full)
    );
    // Without window_end the windows are not matched one to one: no bounds, a regular join
    // that keeps its rows (as Flink plans it), whose result updates.
    let cfg = job(&sql.replace(" AND L.window_end = R.window_end", ""));
    let TransformConfig::Join(j) = &cfg.transforms["insert_1_wj_join"] else {
        panic!("{:?}", cfg.transforms.keys());
    };
    assert_eq!((j.ttl, j.kind), (None, IntervalJoinKind::Full));
}

#[test]
fn computed_columns_are_their_expressions_wherever_they_are_read() {
    let sql = "CREATE TABLE c (ad_id STRING, bid BIGINT, ts BIGINT,
  doubled AS bid * 2, label AS UPPER(ad_id),
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt
) WITH ('connector' = 'filesystem', 'path' = 'c.ndjson', 'format' = 'json');
CREATE TABLE o (label STRING, doubled BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT label, doubled FROM c WHERE doubled > 10";
    let c = compiled(sql);
    let toml = c.toml();
    let cond = filter_condition(&c, "insert_1_o_where");
    assert!(
        cond == "((bid * 2)) > 10" || cond == "(((bid * 2)) > 10)",
        "{toml}"
    );
    assert!(
        has_run(
            select_fields(&c, "insert_1_o"),
            &[("label", "(upper(ad_id))"), ("doubled", "((bid * 2))")]
        ),
        "{toml}"
    );
    job(sql);
    let m = compile(&sql.replace("doubled AS bid * 2", "doubled AS nope * 2"))
        .unwrap_err()
        .message;
    assert!(m.contains("no column `nope`"), "{m}");
}

#[test]
fn string_functions_map_to_the_expression_language() {
    let sql = format!("{CLICKS}CREATE TABLE s (a STRING, b STRING, c STRING, d STRING, e STRING) WITH ('connector' = 'print');
INSERT INTO s SELECT SUBSTRING(ad_id FROM 4), SUBSTRING(ad_id, 2, 3), TRIM(ad_id), REPLACE(ad_id, 'ad-', ''), SPLIT_INDEX(ad_id, '-', 1) FROM clicks");
    let c = compiled(&sql);
    let fields = select_fields(&c, "insert_1_s");
    for want in [
        ("a", "substr(ad_id, 4)"),
        ("b", "substr(ad_id, 2, 3)"),
        ("c", "btrim(ad_id)"),
        ("d", r#"replace(ad_id, "ad-", "")"#),
        ("e", r#"split_index(ad_id, "-", 1)"#),
    ] {
        assert!(has_run(fields, &[want]), "{want:?} not in\n{}", c.toml());
    }
    job(&sql);
    // TRIM of other characters, from one end: Flink's LTRIM with a set of characters.
    let c = compiled(&format!(
        "{CLICKS}CREATE TABLE s (a STRING) WITH ('connector' = 'print');
INSERT INTO s SELECT TRIM(LEADING 'a' FROM ad_id) FROM clicks"
    ));
    let fields = select_fields(&c, "insert_1_s");
    assert!(
        has_run(fields, &[("a", r#"ltrim(ad_id, "a")"#)]),
        "{}",
        c.toml()
    );
}

#[test]
fn a_regular_join_keeps_rows_for_the_state_ttl_and_loses_the_time_attribute() {
    let sql = format!("SET 'table.exec.state.ttl' = '90 s';\n{IMPS}INSERT INTO o SELECT i.ad_id, c.click_id FROM imps i JOIN cl c ON i.imp_id = c.imp WHERE i.ad_id <> 'x' AND c.click_id + i.imp_id > 2");
    let cfg = job(&sql);
    let TransformConfig::Join(j) = &cfg.transforms["insert_1_o_join"] else {
        panic!("{:?}", cfg.transforms.keys());
    };
    assert_eq!(j.ttl.map(|t| t.as_millis()), Some(90_000));
    assert_eq!(j.on, ["_k0"]);
    let c = compiled(&sql);
    let toml = c.toml();
    // The left-only condition filters the impressions before the join; the one reading both
    // sides filters the pairs.
    let f = filter(&c, "insert_1_o_lwhere");
    assert_eq!(
        (f.inputs.as_slice(), f.condition.as_str()),
        (&["imps".to_string()][..], r#"((ad_id != "x"))"#),
        "{toml}"
    );
    assert_eq!(
        filter_condition(&c, "insert_1_o_where"),
        "(((right.click_id + left.imp_id) > 2))",
        "{toml}"
    );
    // Flink's regular join result has no time attribute: no window over it.
    let (_, _, m) = refusal(&format!("SET 'table.exec.state.ttl' = '90 s';\n{IMPS}CREATE TABLE w (ad_id STRING, n BIGINT) WITH ('connector' = 'print');
CREATE VIEW m AS SELECT i.ad_id, c.rt FROM imps i JOIN cl c ON i.imp_id = c.imp_id;
INSERT INTO w SELECT ad_id, COUNT(*) FROM TABLE(TUMBLE(TABLE m, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end"));
    assert!(m.contains("is not the time attribute of `m`"), "{m}");
}

/// Keep-last deduplication (`ORDER BY rt DESC` and `rn = 1`) ranks equal times latest first, as
/// Flink's last arrival replaces; keep-first without a TTL and other Top-Ns earliest first.
#[test]
fn a_keep_last_rank_breaks_ties_with_the_later_row() {
    let ties = |sql: &str| {
        let cfg = job(sql);
        let rank = cfg.transforms.values().find_map(|t| match t {
            TransformConfig::Rank(r) => Some(r.ties),
            _ => None,
        });
        rank.expect("a rank")
    };
    use crate::operators::rank::config::Ties;
    let last = format!("{CLICKS}{DEDUPE}").replace("rt ASC", "rt DESC");
    assert_eq!(ties(&last), Ties::Later);
    assert_eq!(ties(&format!("{CLICKS}{DEDUPE}")), Ties::Earlier);
    assert_eq!(ties(&last.replace("rn = 1", "rn <= 2")), Ties::Earlier);
    assert_eq!(ties(&last.replace("rt DESC", "bid DESC")), Ties::Earlier);
}
