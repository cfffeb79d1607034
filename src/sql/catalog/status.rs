//! What sluice does with each Flink function: the statuses and their probes.
//!
//! A probe is what the SQL front end must compile for the status to hold: an expression over the
//! test table `t` (`s STRING, n BIGINT, d DECIMAL(10, 3), ts BIGINT, u STRING`, time attribute
//! `rt`), `agg:` an aggregate in `SELECT s, .. FROM t GROUP BY s`, or `sql:` a whole query
//! written into a table `o` of one column `x`.

/// Sluice's status for one function form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Supported {
        probe: &'static str,
    },
    Differs {
        probe: &'static str,
        note: &'static str,
    },
    Refused {
        reason: &'static str,
    },
    NotYet,
}

impl Status {
    /// 0 supported, 1 with a difference, 2 refused, 3 not yet.
    pub fn rank(&self) -> usize {
        match self {
            Status::Supported { .. } => 0,
            Status::Differs { .. } => 1,
            Status::Refused { .. } => 2,
            Status::NotYet => 3,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Status::Supported { .. } => "supported".into(),
            Status::Differs { note, .. } => format!("supported; differs: {note}"),
            Status::Refused { reason } => format!("refused: {reason}"),
            Status::NotYet => "not supported yet".into(),
        }
    }

    pub fn probe(&self) -> Option<&'static str> {
        match self {
            Status::Supported { probe } | Status::Differs { probe, .. } => Some(probe),
            _ => None,
        }
    }
}

use Status::{Differs, Refused, Supported};

const fn ok(probe: &'static str) -> Status {
    Supported { probe }
}

const BEFORE_1970: &str = "a time before 1970 gives the fields of the day it falls on, where Flink 2.3 takes the day after";

const LIBM: &str = "a DOUBLE from the C library's math, which can differ from Java's Math in the last bit (COT(8.25))";

const CASTS: &str = "to STRING, VARCHAR(n), the integer types (held in 64 bits), DOUBLE and FLOAT (both a double) and DECIMAL(p, s), and between TIMESTAMP(3) and TIMESTAMP_LTZ(3)";

const NONDETERMINISTIC: &str = "its value depends on when the record is processed, so results would depend on when a job runs and a replay would differ; use the record's time attribute";

/// (name, the start of the syntax where one name has several forms, status).
const TABLE: &[(&str, &str, Status)] = &[
    ("=", "", ok("n = 1")),
    ("<>", "", ok("n <> 1")),
    (">", "", ok("n > 1")),
    (">=", "", ok("n >= 1")),
    ("<", "", ok("n < 1")),
    ("<=", "", ok("n <= 1")),
    ("IS NULL", "", ok("u IS NULL")),
    ("IS NOT NULL", "", ok("u IS NOT NULL")),
    ("IS DISTINCT FROM", "", ok("u IS DISTINCT FROM s")),
    ("IS NOT DISTINCT FROM", "", ok("u IS NOT DISTINCT FROM s")),
    ("BETWEEN", "", ok("n BETWEEN 1 AND 3")),
    ("NOT BETWEEN", "", ok("n NOT BETWEEN 1 AND 3")),
    ("IN", "value1 IN (value2", ok("n IN (1, 2)")),
    ("NOT IN", "value1 NOT IN (value2", ok("n NOT IN (1, 2)")),
    ("OR", "", ok("n > 1 OR n < 0")),
    ("AND", "", ok("n > 1 AND n < 5")),
    ("NOT", "", ok("NOT (n > 1)")),
    ("IS FALSE", "", ok("(n > 1) IS FALSE")),
    ("IS NOT FALSE", "", ok("(n > 1) IS NOT FALSE")),
    ("IS TRUE", "", ok("(n > 1) IS TRUE")),
    ("IS NOT TRUE", "", ok("(n > 1) IS NOT TRUE")),
    ("IS UNKNOWN", "", ok("(n > 1) IS UNKNOWN")),
    ("IS NOT UNKNOWN", "", ok("(n > 1) IS NOT UNKNOWN")),
    ("+", "", Differs { probe: "n + 1", note: "an INT or BIGINT overflow is an error (the record goes to the dead letters) where Flink wraps around; a DECIMAL result keeps its operands' scale instead of Flink's derived DECIMAL(p, s)" }),
    ("-", "", Differs { probe: "n - 1", note: "an INT or BIGINT overflow is an error where Flink wraps around" }),
    ("*", "", Differs { probe: "n * 2", note: "an INT or BIGINT overflow is an error where Flink wraps around; a DECIMAL product keeps the exact scale instead of Flink's derived DECIMAL(p, s)" }),
    ("/", "", Differs { probe: "n / 2", note: "integers divide as integers, as in Flink; a DECIMAL quotient is exact to 28 digits instead of Flink's derived DECIMAL(p, s)" }),
    ("%", "", ok("n % 2")),
    ("ABS", "", ok("ABS(n)")),
    ("CEIL", "", ok("CEIL(d)")),
    ("CEILING", "", ok("CEILING(d)")),
    ("FLOOR", "", ok("FLOOR(d)")),
    ("SIGN", "", ok("SIGN(d)")),
    ("ROUND", "", ok("ROUND(d, 1)")),
    ("TRUNCATE", "", ok("TRUNCATE(d, 1)")),
    ("BIN", "", ok("BIN(n)")),
    ("HEX", "", ok("HEX(s)")),
    ("POWER", "", Differs { probe: "POWER(n, 2)", note: LIBM }),
    ("SQRT", "", ok("SQRT(d)")),
    ("LN", "", Differs { probe: "LN(d)", note: LIBM }),
    ("LOG10", "", Differs { probe: "LOG10(n)", note: LIBM }),
    ("LOG2", "", Differs { probe: "LOG2(n)", note: LIBM }),
    ("EXP", "", Differs { probe: "EXP(d)", note: LIBM }),
    ("SIN", "", Differs { probe: "SIN(d)", note: LIBM }),
    ("SINH", "", Differs { probe: "SINH(d)", note: LIBM }),
    ("COS", "", Differs { probe: "COS(d)", note: LIBM }),
    ("TAN", "", Differs { probe: "TAN(d)", note: LIBM }),
    ("TANH", "", Differs { probe: "TANH(d)", note: LIBM }),
    ("COT", "", Differs { probe: "COT(d)", note: LIBM }),
    ("ASIN", "", Differs { probe: "ASIN(d)", note: LIBM }),
    ("ACOS", "", Differs { probe: "ACOS(d)", note: LIBM }),
    ("ATAN", "", Differs { probe: "ATAN(d)", note: LIBM }),
    ("ATAN2", "", Differs { probe: "ATAN2(d, n)", note: LIBM }),
    ("COSH", "", Differs { probe: "COSH(d)", note: LIBM }),
    ("DEGREES", "", ok("DEGREES(d)")),
    ("RADIANS", "", ok("RADIANS(d)")),
    ("PI", "", ok("PI()")),
    ("E", "", ok("E()")),
    ("LOG", "LOG(numeric1, numeric2)", Differs { probe: "LOG(2, n)", note: LIBM }),
    ("LOG", "", Differs { probe: "LOG(d)", note: LIBM }),
    ("RAND", "", Refused { reason: NONDETERMINISTIC }),
    ("RAND_INTEGER", "", Refused { reason: NONDETERMINISTIC }),
    ("UUID", "", Refused { reason: NONDETERMINISTIC }),
    ("||", "", ok("s || 'x'")),
    ("CHAR_LENGTH", "", ok("CHAR_LENGTH(s)")),
    ("CHARACTER_LENGTH", "", ok("CHARACTER_LENGTH(s)")),
    ("UPPER", "", ok("UPPER(s)")),
    ("LOWER", "", ok("LOWER(s)")),
    ("POSITION", "", ok("POSITION('a' IN s)")),
    ("TRIM", "", ok("TRIM(BOTH 'x' FROM s)")),
    ("LTRIM", "", ok("LTRIM(s)")),
    ("RTRIM", "", ok("RTRIM(s)")),
    ("BTRIM", "", ok("BTRIM(s, 'x')")),
    ("REPEAT", "", ok("REPEAT(s, 2)")),
    ("REGEXP_REPLACE", "", ok("REGEXP_REPLACE(s, 'a+', 'b')")),
    ("OVERLAY", "", ok("OVERLAY(s PLACING 'x' FROM 2 FOR 1)")),
    ("STARTSWITH", "", ok("STARTSWITH(s, 'he')")),
    ("ENDSWITH", "", ok("ENDSWITH(s, 'lo')")),
    ("SUBSTRING", "", ok("SUBSTRING(s FROM 2 FOR 3)")),
    ("REPLACE", "", ok("REPLACE(s, 'a', 'b')")),
    ("REGEXP_EXTRACT", "", ok("REGEXP_EXTRACT(s, '(l+)', 1)")),
    ("INITCAP", "", ok("INITCAP(s)")),
    ("TRANSLATE", "", ok("TRANSLATE(s, 'abc', 'xy')")),
    ("INET_ATON", "", Differs { probe: "INET_ATON(s)", note: "four parts of up to three digits (Flink also reads MySQL's short forms a.b and a.b.c and leading zeros)" }),
    ("INET_NTOA", "", ok("INET_NTOA(n)")),
    ("JSON_QUOTE", "", ok("JSON_QUOTE(s)")),
    ("JSON_UNQUOTE", "", ok("JSON_UNQUOTE(s)")),
    ("IS_ALPHA", "", Differs { probe: "IS_ALPHA(s)", note: "Unicode alphabetic characters, letter numbers such as Ⅻ included (Flink: letters of the Basic Multilingual Plane)" }),
    ("IS_DIGIT", "", Differs { probe: "IS_DIGIT(s)", note: "ASCII digits only (Flink: any Unicode decimal digit)" }),
    ("IS_DECIMAL", "", Differs { probe: "IS_DECIMAL(s)", note: "a plain decimal number (Flink also takes surrounding spaces, NaN, Infinity and a d or f suffix)" }),
    ("REGEXP_COUNT", "", ok("REGEXP_COUNT(s, '[0-9]+')")),
    ("REGEXP_INSTR", "", ok("REGEXP_INSTR(s, '[0-9]+')")),
    ("REGEXP_SUBSTR", "", ok("REGEXP_SUBSTR(s, '[0-9]+')")),
    ("CONCAT", "", ok("CONCAT(s, 'x', u)")),
    ("CONCAT_WS", "", ok("CONCAT_WS('-', s, u)")),
    ("LPAD", "", ok("LPAD(s, 8, '*')")),
    ("RPAD", "", ok("RPAD(s, 8, '*')")),
    ("FROM_BASE64", "", Differs { probe: "FROM_BASE64(s)", note: "text that is not Base64, or not UTF-8 once decoded, gives NULL (Flink fails the job, or keeps the bytes)" }),
    ("TO_BASE64", "", ok("TO_BASE64(s)")),
    ("ASCII", "", ok("ASCII(s)")),
    ("CHR", "", ok("CHR(n)")),
    ("INSTR", "", ok("INSTR(s, 'l')")),
    ("LEFT", "", ok("LEFT(s, 2)")),
    ("RIGHT", "", ok("RIGHT(s, 2)")),
    ("LOCATE", "", ok("LOCATE('l', s, 2)")),
    ("URL_DECODE", "", ok("URL_DECODE(s)")),
    ("URL_ENCODE", "", ok("URL_ENCODE(s)")),
    ("PARSE_URL", "", ok("PARSE_URL(s, 'QUERY', 'k')")),
    ("REGEXP", "", ok("REGEXP(s, 'h.*')")),
    ("REVERSE", "", ok("REVERSE(s)")),
    ("SPLIT_INDEX", "", ok("SPLIT_INDEX(s, ',', 1)")),
    ("SUBSTR", "", ok("SUBSTR(s, 2, 3)")),
    ("ELT", "", ok("ELT(2, s, u)")),
    ("INTERVAL", "", Differs { probe: "rt + INTERVAL '1' HOUR", note: "day-time intervals added to or taken from a timestamp only" }),
    ("LOCALTIME", "", Refused { reason: NONDETERMINISTIC }),
    ("LOCALTIMESTAMP", "", Refused { reason: NONDETERMINISTIC }),
    ("CURRENT_TIME", "", Refused { reason: NONDETERMINISTIC }),
    ("CURRENT_DATE", "", Refused { reason: NONDETERMINISTIC }),
    ("CURRENT_TIMESTAMP", "", Refused { reason: NONDETERMINISTIC }),
    ("NOW", "", Refused { reason: NONDETERMINISTIC }),
    ("CURRENT_ROW_TIMESTAMP", "", Refused { reason: NONDETERMINISTIC }),
    ("EXTRACT", "", Differs { probe: "EXTRACT(DOW FROM rt)", note: BEFORE_1970 }),
    ("YEAR", "", Differs { probe: "YEAR(rt)", note: BEFORE_1970 }),
    ("QUARTER", "", Differs { probe: "QUARTER(rt)", note: BEFORE_1970 }),
    ("MONTH", "", Differs { probe: "MONTH(rt)", note: BEFORE_1970 }),
    ("WEEK", "", Differs { probe: "WEEK(rt)", note: BEFORE_1970 }),
    ("DAYOFYEAR", "", Differs { probe: "DAYOFYEAR(rt)", note: BEFORE_1970 }),
    ("DAYOFMONTH", "", Differs { probe: "DAYOFMONTH(rt)", note: BEFORE_1970 }),
    ("DAYOFWEEK", "", Differs { probe: "DAYOFWEEK(rt)", note: BEFORE_1970 }),
    ("HOUR", "", Differs { probe: "HOUR(rt)", note: BEFORE_1970 }),
    ("MINUTE", "", Differs { probe: "MINUTE(rt)", note: BEFORE_1970 }),
    ("SECOND", "", Differs { probe: "SECOND(rt)", note: BEFORE_1970 }),
    ("FLOOR TO", "", Differs { probe: "FLOOR(rt TO DAY)", note: "SECOND to YEAR except WEEK; in UTC, the only session time zone sluice has; before 1970 as its day (Flink 2.3: the day after)" }),
    ("CEIL TO", "", Differs { probe: "CEIL(rt TO MONTH)", note: "SECOND to YEAR except WEEK; in UTC" }),
    ("DATE_FORMAT", "", Differs { probe: "DATE_FORMAT(rt, 'yyyy-MM-dd HH:mm')", note: "the pattern letters y, M, d, H, m, s, S" }),
    ("TIMESTAMPADD", "", ok("TIMESTAMPADD(MONTH, 1, rt)")),
    ("TIMESTAMPDIFF", "", ok("TIMESTAMPDIFF(HOUR, rt, rt)")),
    ("FROM_UNIXTIME", "", Differs { probe: "FROM_UNIXTIME(n)", note: "in UTC; the pattern letters y, M, d, H, m, s, S" }),
    ("UNIX_TIMESTAMP", "UNIX_TIMESTAMP()", Refused { reason: NONDETERMINISTIC }),
    ("UNIX_TIMESTAMP", "UNIX_TIMESTAMP(", Differs { probe: "UNIX_TIMESTAMP(s, 'yyyy-MM-dd')", note: "in UTC; the pattern letters y, M, d, H, h, a, m, s, S" }),
    ("TO_DATE", "", Differs { probe: "TO_DATE(s)", note: "a DATE is written as its yyyy-MM-dd text; without a format Flink also reads yyyy-M without a day and years of other lengths" }),
    ("TO_TIMESTAMP_LTZ", "", Differs { probe: "TO_TIMESTAMP_LTZ(n, 3)", note: "of epoch seconds or milliseconds (precision 0 or 3)" }),
    ("TO_TIMESTAMP", "", Differs { probe: "TO_TIMESTAMP(s, 'yyyy-MM-dd HH:mm')", note: "the pattern letters y, M, d, H, h, a, m, s, S" }),
    ("CURRENT_WATERMARK", "", Refused { reason: "the watermark a record meets depends on how sources interleave, so its value would differ between runs; compare with the time attribute instead" }),
    ("CASE", "", ok("CASE WHEN n > 1 THEN 'a' ELSE 'b' END")),
    ("NULLIF", "", ok("NULLIF(n, 1)")),
    ("COALESCE", "", ok("COALESCE(u, s)")),
    ("IF", "", ok("IF(n > 1, s, u)")),
    ("IFNULL", "", ok("IFNULL(u, s)")),
    ("GREATEST", "", ok("GREATEST(n, 1)")),
    ("LEAST", "", ok("LEAST(n, 1)")),
    ("CAST", "", Differs { probe: "CAST(n AS DOUBLE)", note: CASTS }),
    ("TRY_CAST", "", Differs { probe: "TRY_CAST(s AS BIGINT)", note: CASTS }),
    ("MD5", "", ok("MD5(s)")),
    ("SHA1", "", ok("SHA1(s)")),
    ("SHA224", "", ok("SHA224(s)")),
    ("SHA256", "", ok("SHA256(s)")),
    ("SHA384", "", ok("SHA384(s)")),
    ("SHA512", "", ok("SHA512(s)")),
    ("SHA2", "", ok("SHA2(s, 256)")),
    ("COUNT", "", ok("agg:COUNT(DISTINCT n)")),
    ("AVG", "", ok("agg:AVG(n)")),
    ("SUM", "", ok("agg:SUM(d)")),
    ("MAX", "", ok("agg:MAX(n)")),
    ("MIN", "", ok("agg:MIN(n)")),
    ("FIRST_VALUE", "", ok("agg:FIRST_VALUE(u)")),
    ("LAST_VALUE", "", ok("agg:LAST_VALUE(u)")),
    ("ROW_NUMBER", "", Differs { probe: "sql:INSERT INTO o SELECT n FROM (SELECT n, s, ROW_NUMBER() OVER (PARTITION BY s ORDER BY n DESC) AS r FROM t) WHERE r <= 3", note: "in a Top-N or deduplication (a filter on it), as Flink plans it in streaming" }),
    ("TUMBLE", "TUMBLE(TABLE", ok("sql:INSERT INTO o SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end")),
    ("HOP", "HOP(TABLE", ok("sql:INSERT INTO o SELECT COUNT(*) FROM TABLE(HOP(TABLE t, DESCRIPTOR(rt), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)) GROUP BY window_start, window_end")),
    ("CUMULATE", "", ok("sql:INSERT INTO o SELECT COUNT(*) FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(rt), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)) GROUP BY window_start, window_end")),
    ("SESSION", "SESSION(TABLE", ok("sql:INSERT INTO o SELECT COUNT(*) FROM TABLE(SESSION(TABLE t PARTITION BY s, DESCRIPTOR(rt), INTERVAL '1' MINUTE)) GROUP BY s, window_start, window_end")),
    ("TUMBLE", "TUMBLE(time_attr", ok("sql:INSERT INTO o SELECT COUNT(*) FROM t GROUP BY TUMBLE(rt, INTERVAL '1' MINUTE)")),
    ("HOP", "HOP(time_attr", ok("sql:INSERT INTO o SELECT COUNT(*) FROM t GROUP BY HOP(rt, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)")),
    ("SESSION", "SESSION(time_attr", ok("sql:INSERT INTO o SELECT COUNT(*) FROM t GROUP BY s, SESSION(rt, INTERVAL '1' MINUTE)")),
    ("TUMBLE_START", "", ok("sql:INSERT INTO o SELECT TUMBLE_START(rt, INTERVAL '1' MINUTE) FROM t GROUP BY TUMBLE(rt, INTERVAL '1' MINUTE)")),
    ("TUMBLE_END", "", ok("sql:INSERT INTO o SELECT TUMBLE_END(rt, INTERVAL '1' MINUTE) FROM t GROUP BY TUMBLE(rt, INTERVAL '1' MINUTE)")),
    ("TUMBLE_ROWTIME", "", ok("sql:INSERT INTO o SELECT TUMBLE_ROWTIME(rt, INTERVAL '1' MINUTE) FROM t GROUP BY TUMBLE(rt, INTERVAL '1' MINUTE)")),
    ("HOP_START", "", ok("sql:INSERT INTO o SELECT HOP_START(rt, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE) FROM t GROUP BY HOP(rt, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)")),
    ("HOP_END", "", ok("sql:INSERT INTO o SELECT HOP_END(rt, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE) FROM t GROUP BY HOP(rt, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)")),
    ("HOP_ROWTIME", "", ok("sql:INSERT INTO o SELECT HOP_ROWTIME(rt, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE) FROM t GROUP BY HOP(rt, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)")),
    ("SESSION_START", "", ok("sql:INSERT INTO o SELECT SESSION_START(rt, INTERVAL '1' MINUTE) FROM t GROUP BY s, SESSION(rt, INTERVAL '1' MINUTE)")),
    ("SESSION_END", "", ok("sql:INSERT INTO o SELECT SESSION_END(rt, INTERVAL '1' MINUTE) FROM t GROUP BY s, SESSION(rt, INTERVAL '1' MINUTE)")),
    ("SESSION_ROWTIME", "", ok("sql:INSERT INTO o SELECT SESSION_ROWTIME(rt, INTERVAL '1' MINUTE) FROM t GROUP BY s, SESSION(rt, INTERVAL '1' MINUTE)")),
    ("PROCTIME", "", Refused { reason: "processing time makes results depend on when a job runs; sluice computes in event time (a WATERMARK on a column)" }),
    ("TUMBLE_PROCTIME", "", Refused { reason: "processing time makes results depend on when a job runs" }),
    ("HOP_PROCTIME", "", Refused { reason: "processing time makes results depend on when a job runs" }),
    ("SESSION_PROCTIME", "", Refused { reason: "processing time makes results depend on when a job runs" }),
    ("CURRENT_DATABASE", "", Refused { reason: "sluice has no catalogs or databases: a job's tables are the ones its SQL creates" }),
];

/// The status of the form `syntax` of `name`.
pub(super) fn lookup(name: &str, syntax: &str) -> Status {
    TABLE
        .iter()
        .find(|(n, start, _)| *n == name && syntax.starts_with(start))
        .map_or(Status::NotYet, |(_, _, st)| st.clone())
}

/// Every entry, for the tests.
#[cfg(test)]
pub(super) fn entries() -> &'static [(&'static str, &'static str, Status)] {
    TABLE
}
