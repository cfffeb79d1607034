-- DOUBLE arithmetic, printing and the math functions (POWER, SQRT, logarithms, trigonometry),
-- CAST to DOUBLE and TRY_CAST of edge-case strings (scripts/parity/builtins_data.py). COT is left
-- out: Java's Math.tan(8.25) and the C library's differ in the last bit, and COT is 1 / TAN.
CREATE TABLE b (
  id BIGINT, s STRING, n BIGINT, d DECIMAL(10, 3), ts BIGINT, u STRING
) WITH ('connector' = 'filesystem', 'path' = 'data/builtins.ndjson', 'format' = 'json');

CREATE TABLE results (id BIGINT,
  m1 DOUBLE, m2 DOUBLE, m3 DOUBLE, m4 DOUBLE, m5 DOUBLE, m6 DOUBLE, m7 DOUBLE, m8 DOUBLE,
  m9 DOUBLE, m10 DOUBLE, m11 DOUBLE, m12 DOUBLE, m13 DOUBLE, m14 DOUBLE, m15 DOUBLE,
  m16 DOUBLE, m17 DOUBLE, m18 DOUBLE, m19 DOUBLE, m20 DOUBLE, c1 DOUBLE, c2 DOUBLE,
  c3 STRING, c4 BIGINT, c5 DOUBLE, c6 DECIMAL(10, 2), c7 BIGINT, c8 DOUBLE, c9 DOUBLE
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT id,
  POWER(d, 2), SQRT(ABS(d)), LN(ABS(d) + 1), LOG10(ABS(d) + 1), LOG2(ABS(d) + 2), LOG(2, ABS(d) + 3),
  EXP(d / 100), SIN(d), COS(n), TAN(d), SQRT(ABS(n)), ASIN(d / 1000000), ACOS(d / 1000000),
  ATAN(d), ATAN2(CAST(d AS DOUBLE), CAST(n + 1 AS DOUBLE)), SINH(d / 1000), COSH(d / 1000), TANH(d), DEGREES(d), RADIANS(n),
  CAST(n AS DOUBLE) / 3, CAST(d AS DOUBLE) * 0.1, CAST(CAST(d AS DOUBLE) AS STRING),
  TRY_CAST(s AS BIGINT), TRY_CAST(s AS DOUBLE), TRY_CAST(s AS DECIMAL(10, 2)),
  CAST(POWER(ABS(d), 1.5) AS BIGINT), ROUND(CAST(d AS DOUBLE), 1), PI() * E()
FROM b;
