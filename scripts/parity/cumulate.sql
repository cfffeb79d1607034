-- Cumulating windows: every 5 s, the total of the 20 s window so far.
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  clicks BIGINT, top_bid BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT ad_id, window_start, window_end, COUNT(*), MAX(bid)
FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '5' SECOND, INTERVAL '20' SECOND))
GROUP BY ad_id, window_start, window_end;
