-- FIRST_VALUE, LAST_VALUE and MIN/MAX of strings per ad (an append-only input, read in file
-- order: the first and last user of each ad are the file's), and a MAX over an expression
-- (Nexmark q16's `max(DATE_FORMAT(dateTime, 'HH:mm'))`).
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, first_user STRING, last_user STRING, lo STRING, hi STRING,
  last_minute STRING, clicks BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');
INSERT INTO results
SELECT ad_id, FIRST_VALUE(user_id), LAST_VALUE(user_id), MIN(user_id), MAX(user_id),
  MAX(DATE_FORMAT(rt, 'HH:mm')), COUNT(*)
FROM clicks GROUP BY ad_id;
