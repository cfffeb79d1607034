-- Integer division, SIGN, TRUNCATE, HEX/BIN of integers and the conditional forms (IF, NULLIF,
-- IS DISTINCT FROM, IS TRUE/UNKNOWN) over zero, negative, 64-bit and NULL values. The table has no
-- WATERMARK: its times (before 1970, in 2100) are values here, not event time.
CREATE TABLE b (
  id BIGINT, s STRING, n BIGINT, d DECIMAL(10, 3), ts BIGINT, u STRING,
  rt AS TO_TIMESTAMP_LTZ(ts, 3)
) WITH ('connector' = 'filesystem', 'path' = 'data/builtins.ndjson', 'format' = 'json');

CREATE TABLE results (id BIGINT,
  q1 BIGINT, q2 BIGINT, q3 BIGINT, s1 BIGINT, s2 DECIMAL(10, 3), t1 DECIMAL(10, 1),
  t2 DECIMAL(10, 0), t3 BIGINT, h1 STRING, b1 STRING, i1 STRING, i2 BIGINT, x1 BOOLEAN,
  x2 BOOLEAN, x3 BOOLEAN, x4 BOOLEAN, x5 BOOLEAN, x6 STRING
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT id,
  n / 3, n / NULLIF(n, 0), (n + 7) / -2, SIGN(n), SIGN(d), TRUNCATE(d, 1), TRUNCATE(d),
  TRUNCATE(n, -1), HEX(n), BIN(n), IF(n > 0, s, u), NULLIF(n, 7), n IS DISTINCT FROM 7,
  u IS NOT DISTINCT FROM s, u IS DISTINCT FROM NULL, (n > 0) IS NOT TRUE, (u = 'x') IS UNKNOWN,
  IF(u IS NULL, 'none', CHR(CAST(MOD(n, 1000) AS INT)))
FROM b;
