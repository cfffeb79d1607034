-- Exact COUNT(DISTINCT) per ad and a FILTER, over a whole stream.
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, users BIGINT, big_bids BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');
INSERT INTO results
SELECT ad_id, COUNT(DISTINCT user_id), COUNT(*) FILTER (WHERE bid >= 50) FROM clicks GROUP BY ad_id;
