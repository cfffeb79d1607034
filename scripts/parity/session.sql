-- Session windows per user, closed by a 3 s gap.
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (user_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  clicks BIGINT, spend BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT user_id, window_start, window_end, COUNT(*), SUM(bid)
FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(rt), INTERVAL '3' SECOND))
GROUP BY user_id, window_start, window_end;
