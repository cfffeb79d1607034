-- Grouping by an expression (the minute of the event time, as text) with FILTER.
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (at_minute STRING, clicks BIGINT, big BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');
INSERT INTO results
SELECT DATE_FORMAT(rt, 'yyyy-MM-dd HH:mm'), COUNT(*), COUNT(*) FILTER (WHERE bid > 50)
FROM clicks GROUP BY DATE_FORMAT(rt, 'yyyy-MM-dd HH:mm');
