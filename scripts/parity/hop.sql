-- Hopping windows (15 s every 5 s) with HAVING and a window_time column.
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  window_time TIMESTAMP(3), clicks BIGINT, spend BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT ad_id, window_start, window_end, window_time, COUNT(*), SUM(bid)
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(rt), INTERVAL '5' SECOND, INTERVAL '15' SECOND))
GROUP BY ad_id, window_start, window_end, window_time
HAVING COUNT(*) > 20;
