//! The SQL front end against hand-written expectations: what each statement compiles to (read
//! back as a typed config and validated as a plan, as a job would be), and where each refusal
//! points.

use super::{compile, Compiled};
use crate::config::{
    self, FilterTransformConfig, SelectTransformConfig, SinkConfig, SourceConfig, TimeUnitConfig,
    TransformConfig, WindowConfig, WindowTransformConfig,
};

mod builtins;
mod chains;
mod formats;
mod group_hot_keys;
mod group_values;
mod group_windows;
mod joins;
mod nexmark;
mod over;
mod sinks;
mod time_arith;
mod views;

/// Compiles `sql`, which must compile.
pub(super) fn compiled(sql: &str) -> Compiled {
    compile(sql).unwrap_or_else(|e| panic!("{e}\n{sql}"))
}

/// The transform `name` of `c`, which must be one.
pub(super) fn transform<'c>(c: &'c Compiled, name: &str) -> &'c TransformConfig {
    c.transform(name)
        .unwrap_or_else(|| panic!("no transform `{name}`; the tables are:\n{}", c.toml()))
}

/// The select `name` of `c`.
pub(super) fn select<'c>(c: &'c Compiled, name: &str) -> &'c SelectTransformConfig {
    match transform(c, name) {
        TransformConfig::Select(s) => s,
        other => panic!("{name} is no select: {other:?}\n{}", c.toml()),
    }
}

/// The fields of the select `name` of `c`, in order: (output name, expression).
pub(super) fn select_fields<'c>(c: &'c Compiled, name: &str) -> &'c [(String, String)] {
    &select(c, name).fields.0
}

/// The filter `name` of `c`.
pub(super) fn filter<'c>(c: &'c Compiled, name: &str) -> &'c FilterTransformConfig {
    match transform(c, name) {
        TransformConfig::Filter(f) => f,
        other => panic!("{name} is no filter: {other:?}\n{}", c.toml()),
    }
}

/// The condition (`where`) of the filter `name` of `c`.
pub(super) fn filter_condition<'c>(c: &'c Compiled, name: &str) -> &'c str {
    &filter(c, name).condition
}

/// The window transform `name` of `c`.
pub(super) fn window_of<'c>(c: &'c Compiled, name: &str) -> &'c WindowTransformConfig {
    match transform(c, name) {
        TransformConfig::Window(w) => w,
        other => panic!("{name} is no window: {other:?}\n{}", c.toml()),
    }
}

/// The source `name` of `c`.
pub(super) fn source<'c>(c: &'c Compiled, name: &str) -> &'c SourceConfig {
    c.sources
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("no source `{name}`; the tables are:\n{}", c.toml()))
}

/// The sink `name` of `c`.
pub(super) fn sink<'c>(c: &'c Compiled, name: &str) -> &'c SinkConfig {
    c.sinks
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("no sink `{name}`; the tables are:\n{}", c.toml()))
}

/// The Kafka source `name` of `c`.
pub(super) fn kafka_source<'c>(
    c: &'c Compiled,
    name: &str,
) -> &'c crate::connectors::kafka::KafkaSourceConfig {
    match source(c, name) {
        SourceConfig::Kafka(k) => k,
        other => panic!("{name} is no Kafka source: {other:?}\n{}", c.toml()),
    }
}

/// The Kafka sink `name` of `c`.
pub(super) fn kafka_sink<'c>(
    c: &'c Compiled,
    name: &str,
) -> &'c crate::connectors::kafka::KafkaSinkConfig {
    match sink(c, name) {
        SinkConfig::Kafka(k) => k,
        other => panic!("{name} is no Kafka sink: {other:?}\n{}", c.toml()),
    }
}

/// Whether `want` appears in `table` as consecutive entries, in its order (what a substring
/// of an inline table's text asserted).
pub(super) fn has_run(table: &[(String, String)], want: &[(&str, &str)]) -> bool {
    !want.is_empty()
        && table.windows(want.len()).any(|w| {
            w.iter()
                .zip(want)
                .all(|((k, v), (wk, wv))| k == wk && v == wv)
        })
}

/// Every expression the transforms of `c` evaluate (filter conditions, select and aggregate
/// expressions) and every field they group, key, rank or join by: all the expression text the
/// compiled tables hold.
pub(super) fn expressions(c: &Compiled) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for (_, t) in &c.transforms {
        match t {
            TransformConfig::Filter(f) => out.push(&f.condition),
            TransformConfig::Select(s) => out.extend(s.fields.0.iter().map(|(_, e)| e.as_str())),
            TransformConfig::Window(w) => {
                out.extend(w.group_by.iter().map(String::as_str));
                out.extend(w.aggregates.0.iter().map(|(_, e)| e.as_str()));
            }
            TransformConfig::GroupAggregate(g) => {
                out.extend(g.group_by.iter().map(String::as_str));
                out.extend(g.aggregates.0.iter().map(|(_, e)| e.as_str()));
            }
            TransformConfig::OverAggregate(o) => {
                out.extend(o.partition_by.iter().map(String::as_str));
                out.extend(o.aggregates.0.iter().map(|(_, e)| e.as_str()));
            }
            TransformConfig::TopN(t) => {
                out.extend(t.partition_by.iter().map(String::as_str));
                out.extend(t.order_by.iter().map(String::as_str));
            }
            TransformConfig::Rank(t) => {
                out.extend(t.partition_by.iter().map(String::as_str));
                out.extend(t.order_by.iter().map(String::as_str));
            }
            TransformConfig::Dedupe(d) => out.extend(d.key.iter().map(String::as_str)),
            TransformConfig::IntervalJoin(j) => out.extend(j.on.iter().map(String::as_str)),
            TransformConfig::Join(j) => out.extend(j.on.iter().map(String::as_str)),
            TransformConfig::TemporalJoin(j) => {
                out.push(&j.on.input);
                out.push(&j.on.table);
            }
        }
    }
    out
}

pub(super) const CLICKS: &str = "CREATE TABLE clicks (
  ad_id STRING, user_id BIGINT, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');
";

const CPM: &str = "CREATE TABLE cpm (ad_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  clicks BIGINT, spend BIGINT) WITH ('connector' = 'filesystem', 'path' = 'out/cpm', 'format' = 'json');
";

/// Compiles `sql` and validates its tables as a plan, as a job would: under a `[runtime]` and
/// `[checkpoint]` header parsed from TOML, the compiled sources, transforms and sinks.
pub(super) fn job(sql: &str) -> config::Config {
    let c = compiled(sql);
    let header =
        "[runtime]\nshards = 2\n\n[checkpoint]\ndir = \"state/sql_test\"\ninterval = \"1s\"\n";
    let (mut cfg, src) =
        config::parse(header, "compiled.toml").unwrap_or_else(|e| panic!("{e}\n{header}"));
    cfg.sources = c.sources.iter().cloned().collect();
    cfg.transforms = c.transforms.iter().cloned().collect();
    cfg.sinks = c.sinks.iter().cloned().collect();
    // Each name once, as the tables of one TOML file would have it.
    assert_eq!(cfg.sources.len(), c.sources.len(), "{}", c.toml());
    assert_eq!(cfg.transforms.len(), c.transforms.len(), "{}", c.toml());
    assert_eq!(cfg.sinks.len(), c.sinks.len(), "{}", c.toml());
    crate::plan::build(&cfg, &src).unwrap_or_else(|e| panic!("{e}\n{}", c.toml()));
    cfg
}

pub(super) fn refusal(sql: &str) -> (u64, u64, String) {
    match compile(sql) {
        Ok(c) => panic!("compiled, but should not have:\n{}", c.toml()),
        Err(e) => (e.line, e.column, e.message),
    }
}

fn window<'c>(cfg: &'c config::Config, name: &str) -> &'c crate::config::WindowTransformConfig {
    match &cfg.transforms[name] {
        TransformConfig::Window(w) => w,
        other => panic!("{name} is {other:?}"),
    }
}

#[test]
fn the_issue_example_compiles_to_a_tumbling_window_job() {
    let sql = format!(
        "{CLICKS}{CPM}INSERT INTO cpm
SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
GROUP BY ad_id, window_start, window_end;"
    );
    let cfg = job(&sql);
    let SourceConfig::File(src) = &cfg.sources["clicks"] else {
        panic!("{:?}", cfg.sources["clicks"]);
    };
    assert_eq!(src.path.as_str(), "data/clicks.ndjson");
    let c = compiled(&sql);
    let toml = c.toml();
    let time = source(&c, "clicks")
        .event_time()
        .expect("clicks has a WATERMARK");
    assert_eq!(
        (time.field.as_str(), time.unit),
        ("ts", TimeUnitConfig::Ms),
        "{toml}"
    );
    assert_eq!(
        source(&c, "clicks")
            .watermark()
            .max_out_of_orderness
            .as_millis(),
        5000,
        "{toml}"
    );
    let w = window(&cfg, "insert_1_cpm_window");
    assert_eq!(w.group_by, vec!["ad_id".to_string()]);
    let w = window_of(&c, "insert_1_cpm_window");
    assert!(
        matches!(w.window, WindowConfig::Tumbling { size } if size.as_millis() == 60_000),
        "{toml}"
    );
    assert!(
        has_run(&w.aggregates.0, &[("_a0", "count()"), ("_a1", "sum(bid)")]),
        "{toml}"
    );
    // The sink table's column names, in its order; timestamps as Flink's JSON writes them.
    let fields = select_fields(&c, "insert_1_cpm");
    assert!(has_run(fields, &[("clicks", "_a0")]), "{toml}");
    assert!(
        has_run(fields, &[("window_start", "sql_timestamp(window_start)")]),
        "{toml}"
    );
    let SinkConfig::File(sink) = &cfg.sinks["cpm"] else {
        panic!("{:?}", cfg.sinks["cpm"]);
    };
    assert_eq!(sink.path.to_str(), Some("out/cpm/part-0.json"));
}

#[test]
fn hop_and_cumulate_map_to_sliding_and_cumulative_windows() {
    let hop = format!(
        "{CLICKS}{CPM}INSERT INTO cpm SELECT ad_id, window_start, window_end, COUNT(*), MAX(bid)
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(rt), INTERVAL '10' SECOND, INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, ad_id"
    );
    let c = compiled(&hop);
    assert!(
        matches!(
            window_of(&c, "insert_1_cpm_window").window,
            WindowConfig::Sliding { size, slide }
                if (size.as_millis(), slide.as_millis()) == (60_000, 10_000)
        ),
        "{}",
        c.toml()
    );
    job(&hop);
    let cumulate = hop.replace("HOP(", "CUMULATE(");
    let c = compiled(&cumulate);
    assert!(
        matches!(
            window_of(&c, "insert_1_cpm_window").window,
            WindowConfig::Cumulative { step, max_size }
                if (step.as_millis(), max_size.as_millis()) == (10_000, 60_000)
        ),
        "{}",
        c.toml()
    );
    job(&cumulate);
}

#[test]
fn session_partition_by_maps_to_a_session_window_per_key() {
    let one = format!(
        "{CLICKS}{CPM}INSERT INTO cpm SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid)
FROM TABLE(SESSION(TABLE clicks PARTITION BY ad_id, DESCRIPTOR(rt), INTERVAL '30' SECOND))
GROUP BY ad_id, window_start, window_end"
    );
    let c = compiled(&one);
    assert!(
        matches!(
            window_of(&c, "insert_1_cpm_window").window,
            WindowConfig::Session { gap } if gap.as_millis() == 30_000
        ),
        "{}",
        c.toml()
    );
    assert_eq!(
        window(&job(&one), "insert_1_cpm_window").group_by,
        vec!["ad_id".to_string()]
    );
    let two = one
        .replace("PARTITION BY ad_id", "PARTITION BY (user_id, ad_id)")
        .replace("GROUP BY ad_id,", "GROUP BY ad_id, user_id,");
    let cfg = job(&two);
    let mut keys = window(&cfg, "insert_1_cpm_window").group_by.clone();
    keys.sort();
    assert_eq!(keys, vec!["ad_id".to_string(), "user_id".to_string()]);
}

#[test]
fn where_case_and_functions_become_a_filter_and_a_select() {
    let sql = format!(
        "{CLICKS}CREATE TABLE out (ad STRING, tier STRING, bid BIGINT, t TIMESTAMP_LTZ(3))
  WITH ('connector' = 'print');
INSERT INTO out
SELECT UPPER(ad_id) AS ad,
       CASE WHEN bid >= 100 THEN 'high' WHEN bid > 10 THEN 'mid' ELSE 'low' END,
       bid * 2, rt
FROM clicks WHERE bid BETWEEN 1 AND 1000 AND ad_id <> 'x' AND user_id IN (1, 2, 3)"
    );
    let cfg = job(&sql);
    let c = compiled(&sql);
    let toml = c.toml();
    assert_eq!(
        filter_condition(&c, "insert_1_out_where"),
        r#"((((bid) >= (1) && (bid) <= (1000)) && (ad_id != "x")) && ((user_id) in [1, 2, 3]))"#,
        "{toml}"
    );
    let fields = select_fields(&c, "insert_1_out");
    assert!(
        fields.iter().any(|(_, e)| e.contains(r#"(coalesce((bid >= 100), false) ? ("high") : ((coalesce((bid > 10), false) ? ("mid") : ("low"))))"#)),
        "{toml}"
    );
    // The time attribute is the record's epoch milliseconds; a TIMESTAMP_LTZ column writes it
    // with Flink's `Z`.
    assert!(
        has_run(fields, &[("t", r#"concat(sql_timestamp(ts), "Z")"#)]),
        "{toml}"
    );
    assert!(matches!(cfg.sinks["out"], SinkConfig::Stdout(_)));
}

#[test]
fn views_and_statement_sets_chain_transforms() {
    let sql = format!(
        "{CLICKS}{CPM}
CREATE VIEW big AS SELECT ad_id, bid, rt FROM clicks WHERE bid > 5;
EXECUTE STATEMENT SET BEGIN
INSERT INTO cpm SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid)
  FROM TABLE(TUMBLE(TABLE big, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end;
INSERT INTO cpm SELECT ad_id, window_start, window_end, COUNT(DISTINCT bid), MIN(bid)
  FROM TABLE(TUMBLE(TABLE big, DESCRIPTOR(rt), INTERVAL '1' HOUR)) GROUP BY ad_id, window_start, window_end
  HAVING COUNT(*) > 1;
END;"
    );
    let cfg = job(&sql);
    assert_eq!(
        window(&cfg, "insert_1_cpm_window").inputs,
        vec!["big".to_string()]
    );
    assert!(cfg.transforms.contains_key("insert_2_cpm_having"));
    let SinkConfig::File(sink) = &cfg.sinks["cpm"] else {
        panic!();
    };
    assert_eq!(
        sink.inputs,
        vec!["insert_1_cpm".to_string(), "insert_2_cpm".to_string()]
    );
}

#[test]
fn kafka_tables_map_flink_option_names() {
    let sql = "CREATE TABLE k (ad_id STRING, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 0),
  WATERMARK FOR rt AS rt) WITH ('connector' = 'kafka', 'topic' = 'a;b',
  'properties.bootstrap.servers' = '127.0.0.1:9092', 'properties.group.id' = 'g',
  'properties.fetch.min.bytes' = '1', 'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE o (ad_id STRING) WITH ('connector' = 'kafka', 'topic' = 'out',
  'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'p');
INSERT INTO o SELECT ad_id FROM k;";
    use crate::connectors::kafka::config::{
        Delivery, KafkaStartConfig, KafkaStartName, KafkaStopAt, KafkaStopName,
    };
    let c = compiled(sql);
    let toml = c.toml();
    let k = kafka_source(&c, "k");
    assert_eq!(
        k.topics.as_deref(),
        Some(&["a".to_string(), "b".to_string()][..]),
        "{toml}"
    );
    assert_eq!(k.group_id.as_deref(), Some("g"), "{toml}");
    assert_eq!(
        k.start,
        Some(KafkaStartConfig::Named(KafkaStartName::Earliest)),
        "{toml}"
    );
    assert_eq!(k.stop_at, KafkaStopAt::Named(KafkaStopName::End), "{toml}");
    assert_eq!(
        k.options,
        [("fetch.min.bytes".to_string(), "1".to_string())].into(),
        "{toml}"
    );
    assert_eq!(
        k.event_time.as_ref().map(|t| t.unit),
        Some(TimeUnitConfig::S),
        "{toml}"
    );
    assert_eq!(k.watermark.max_out_of_orderness.as_millis(), 0, "{toml}");
    let o = kafka_sink(&c, "o");
    assert_eq!(o.delivery, Delivery::ExactlyOnce, "{toml}");
    assert_eq!(o.transactional_id_prefix.as_deref(), Some("p"), "{toml}");
    job(sql);
}

#[test]
fn refusals_point_at_line_and_column() {
    let cases: Vec<(String, (u64, u64), &str)> = vec![
        ("SELECT 1".into(), (1, 1), "`SELECT` statements are not supported"),
        (format!("{CLICKS}CREATE TABLE o (a STRING) WITH ('connector' = 'print');\nINSERT INTO o SELECT nope FROM clicks"), (7, 22), "no column `nope`"),
        (format!("{CLICKS}CREATE TABLE o (a BIGINT) WITH ('connector' = 'filesystem', 'path' = 'o', 'format' = 'json');\nINSERT INTO o SELECT COUNT(*) FROM clicks"), (7, 1), "`o` takes appends only, but this query's result is updating"),
        (format!("{CLICKS}{CPM}INSERT INTO cpm SELECT ad_id, window_start, window_end, COUNT(*) FILTER (WHERE bid > 1), SUM(bid)\nFROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end"), (8, 57), "COUNT(...) FILTER (WHERE ...) in a window aggregation is not supported"),
        (format!("{CLICKS}CREATE TABLE o (a STRING) WITH ('connector' = 'print');\nINSERT INTO o /*+ OPTIONS('x'='y') */ SELECT ad_id FROM clicks"), (7, 15), "dynamic table options other than sluice.*"),
        (format!("{CLICKS}CREATE TABLE o (a STRING) WITH ('connector' = 'print');\nINSERT INTO o SELECT ad_id, bid FROM clicks"), (7, 15), "gives 2 columns but the sink table has 1"),
        ("CREATE TABLE t (a STRING, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = 'p', 'format' = 'json');\nCREATE TABLE o (a STRING, n BIGINT) WITH ('connector' = 'print');\nINSERT INTO o SELECT a, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY a, window_start, window_end".into(), (3, 72), "it has none: a window needs one, so declare a WATERMARK"),
        (format!("{}CREATE TABLE o (a STRING) WITH ('connector' = 'print');\nINSERT INTO o SELECT ad_id FROM clicks", CLICKS.replace("'format' = 'json'", "'format' = 'json', 'bogus' = '1'")), (5, 87), "'bogus': not supported for connector 'filesystem'"),
        (format!("{CLICKS}{CPM}INSERT INTO cpm SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid)\nFROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end"), (9, 44), "`ts` is not the time attribute of `clicks`"),
        (format!("{CLICKS}{CPM}INSERT INTO cpm SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid)\nFROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id"), (8, 17), "must GROUP BY window_start, window_end"),
        (format!("{CLICKS}{CPM}INSERT INTO cpm SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid)\nFROM TABLE(SESSION(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end"), (9, 12), "SESSION without PARTITION BY"),
        (format!("{CLICKS}{CPM}INSERT INTO cpm SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid)\nFROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end"), (9, 33), "must be the GROUP BY keys (ad_id)"),
        (format!("{CLICKS}{CPM}INSERT INTO cpm SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid)\nFROM TABLE(TUMBLE(TABLE clicks PARTITION BY ad_id, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end"), (9, 32), "TUMBLE takes no PARTITION BY"),
        ("INSERT INTO nowhere SELECT 1".into(), (1, 1), "no such table"),
        ("CREATE TABLE t (a STRING,) WITH ()".into(), (1, 26), "expected"),
    ];
    let mut wrong = Vec::new();
    for (sql, (line, column), message) in cases {
        let (l, c, m) = refusal(&sql);
        if !m.contains(message) || (l, c) != (line, column) {
            let at = sql
                .lines()
                .nth(l.saturating_sub(1) as usize)
                .unwrap_or("")
                .get(c.saturating_sub(1) as usize..)
                .unwrap_or("");
            wrong.push(format!(
                "want {line}:{column} {message:?}, got {l}:{c} {m:?} at {at:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_table_both_read_and_written_and_a_job_without_insert_are_refused() {
    let (_, _, m) = refusal(&format!(
        "{CLICKS}INSERT INTO clicks SELECT ad_id, user_id, bid, ts FROM clicks"
    ));
    assert!(m.contains("both read and written"), "{m}");
    let (_, _, m) = refusal(CLICKS);
    assert!(m.contains("no INSERT INTO"), "{m}");
}

#[test]
fn a_view_that_only_keeps_fields_is_no_transform_and_unread_tables_are_not_read() {
    let sql = format!(
        "{CLICKS}CREATE TABLE other (ad_id STRING, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt) WITH ('connector' = 'filesystem', 'path' = 'other.ndjson', 'format' = 'json');
CREATE VIEW unused AS SELECT ad_id FROM other;
CREATE VIEW kept AS SELECT ad_id, bid FROM clicks;
CREATE VIEW computed AS SELECT ad_id, bid * 2 AS b2 FROM clicks;
CREATE TABLE o (ad_id STRING, bid BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT ad_id, bid FROM kept WHERE bid > 1;"
    );
    let cfg = job(&sql);
    assert_eq!(cfg.sources.keys().collect::<Vec<_>>(), ["clicks"]);
    // `kept` reads clicks' fields in place: its filter reads the source itself; `computed`
    // is a select no INSERT reads, so it is not run either.
    let names: Vec<&String> = cfg.transforms.keys().collect();
    assert_eq!(names, ["insert_1_o", "insert_1_o_where"], "{names:?}");
    let TransformConfig::Filter(f) = &cfg.transforms["insert_1_o_where"] else {
        panic!("not a filter");
    };
    assert_eq!(f.inputs, ["clicks"]);
}

#[test]
fn equal_subqueries_are_computed_once_for_both_readers() {
    let counts = "(SELECT ad_id, COUNT(*) AS n, window_start, window_end FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY ad_id, window_start, window_end)";
    let sql = format!(
        "{CLICKS}CREATE TABLE o (ad_id STRING, n BIGINT) WITH ('connector' = 'print');
INSERT INTO o SELECT a.ad_id, a.n FROM {counts} a JOIN (SELECT n AS m, window_start, window_end FROM {counts}) b
  ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.n >= b.m;"
    );
    let cfg = job(&sql);
    let windows: Vec<&String> = cfg
        .transforms
        .iter()
        .filter(|(_, t)| matches!(t, TransformConfig::Window(_)))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(windows.len(), 1, "{windows:?}");
    // The select naming the window's columns is shared too: the right side selects from the
    // left side's select.
    let TransformConfig::IntervalJoin(j) = &cfg.transforms["insert_1_o_join"] else {
        panic!("{:?}", cfg.transforms.keys());
    };
    let input = |s: &str| match &cfg.transforms[s] {
        TransformConfig::Select(sel) => sel.inputs.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(input(&j.left), [windows[0].clone()]);
    assert_eq!(input(&j.right), std::slice::from_ref(&j.left));
    // A different window is not shared.
    let other = sql.replacen("INTERVAL '1' MINUTE", "INTERVAL '2' MINUTE", 1);
    let cfg = job(&other);
    let n = cfg
        .transforms
        .values()
        .filter(|t| matches!(t, TransformConfig::Window(_)))
        .count();
    assert_eq!(n, 2);
}

#[test]
fn flinks_watermark_alignment_options_set_the_sources_max_drift() {
    let table = |opts: &str| {
        format!("CREATE TABLE a (k STRING, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt)
  WITH ('connector' = 'filesystem', 'path' = 'a.ndjson', 'format' = 'json'{opts});
CREATE TABLE o (k STRING) WITH ('connector' = 'print');
INSERT INTO o SELECT k FROM a;")
    };
    let cfg = job(&table(", 'scan.watermark.alignment.group' = 'g', 'scan.watermark.alignment.max-drift' = '5 s', 'scan.watermark.alignment.update-interval' = '1 s'"));
    assert_eq!(
        cfg.sources["a"]
            .watermark()
            .max_drift
            .map(|d| d.as_millis()),
        Some(5_000)
    );
    let cfg = job(&table(""));
    assert_eq!(cfg.sources["a"].watermark().max_drift, None);
    for (opts, want) in [
        (", 'scan.watermark.alignment.group' = 'g'", "needs 'scan.watermark.alignment.max-drift'"),
        (", 'scan.watermark.alignment.max-drift' = '5 s'", "needs 'scan.watermark.alignment.group'"),
        (", 'scan.watermark.alignment.group' = 'g', 'scan.watermark.alignment.max-drift' = 'soon'", "not a positive duration"),
    ] {
        let (_, _, m) = refusal(&table(opts));
        assert!(m.contains(want), "{opts}: {m}");
    }
}
