-- An OVER aggregation over the last 10 seconds per ad, and one over everything before (no frame).
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, user_id STRING, ts BIGINT, n BIGINT, lo BIGINT, spend BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');
INSERT INTO results
SELECT ad_id, user_id, ts,
  COUNT(*) OVER (PARTITION BY ad_id ORDER BY rt RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW),
  MIN(bid) OVER (PARTITION BY ad_id ORDER BY rt RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW),
  SUM(bid) OVER (PARTITION BY ad_id ORDER BY rt RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW)
FROM clicks;
