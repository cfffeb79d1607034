-- Tumbling windows: count, sum, min, max, avg (of integers: an integer) per ad and 10 s.
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  clicks BIGINT, spend BIGINT, lo BIGINT, hi BIGINT, mean BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT ad_id, window_start, window_end, COUNT(*), SUM(bid), MIN(bid), MAX(bid), AVG(bid)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '10' SECOND))
GROUP BY ad_id, window_start, window_end;
