-- Flink's temporal functions at calendar boundaries (leap days, year ends, before 1970, ISO week
-- 53) and parsing of strings in several formats, invalid ones included; session time zone UTC.
-- Times before 1970 are left out: Flink 2.3 takes the calendar fields of a negative epoch time
-- from the day after (DAYOFWEEK of 1969-12-31 23:59:59.999 is Thursday's 5, FLOOR to the month is
-- 1970-01-01), where sluice gives the day it is.
CREATE TABLE b (
  id BIGINT, s STRING, n BIGINT, d DECIMAL(10, 3), ts BIGINT, u STRING,
  rt AS TO_TIMESTAMP_LTZ(ts, 3)
) WITH ('connector' = 'filesystem', 'path' = 'data/builtins.ndjson', 'format' = 'json');

CREATE TABLE results (id BIGINT,
  t1 TIMESTAMP(3), t2 TIMESTAMP(3), u1 BIGINT, u2 BIGINT, dt DATE, f1 STRING, f2 STRING,
  a1 TIMESTAMP_LTZ(3), a2 TIMESTAMP_LTZ(3), a3 TIMESTAMP_LTZ(3), a4 TIMESTAMP_LTZ(3),
  d1 INT, d2 INT, d3 INT, d4 INT, fl1 TIMESTAMP_LTZ(3), fl2 TIMESTAMP_LTZ(3),
  fl3 TIMESTAMP_LTZ(3), fl4 TIMESTAMP_LTZ(3), w1 BIGINT, w2 BIGINT, w3 BIGINT, w4 BIGINT,
  w5 BIGINT, w6 BIGINT, w7 BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT id,
  TO_TIMESTAMP(s), TO_TIMESTAMP(s, 'dd/MM/yyyy HH:mm'), UNIX_TIMESTAMP(s),
  UNIX_TIMESTAMP(s, 'yyyy-MM-dd'), TO_DATE(s), FROM_UNIXTIME(ts / 1000),
  FROM_UNIXTIME(ts / 1000, 'yyyy/MM/dd HH'),
  TIMESTAMPADD(MONTH, 1, rt), TIMESTAMPADD(DAY, -3, rt), TIMESTAMPADD(YEAR, 1, rt),
  TIMESTAMPADD(QUARTER, -2, rt),
  TIMESTAMPDIFF(MONTH, rt, TIMESTAMPADD(DAY, 40, rt)), TIMESTAMPDIFF(HOUR, TIMESTAMPADD(MINUTE, 150, rt), rt),
  TIMESTAMPDIFF(YEAR, TIMESTAMPADD(MONTH, -13, rt), rt), TIMESTAMPDIFF(DAY, rt, TIMESTAMPADD(WEEK, 2, rt)),
  FLOOR(rt TO MONTH), CEIL(rt TO HOUR), FLOOR(rt TO YEAR), CEIL(rt TO QUARTER),
  DAYOFWEEK(rt), DAYOFYEAR(rt), QUARTER(rt), WEEK(rt), EXTRACT(DOW FROM rt), EXTRACT(DOY FROM rt),
  EXTRACT(WEEK FROM rt)
FROM b
WHERE ts >= 0;
