-- Window Top-N: the three ads with the highest spend in each 10 s window (ties by ad id).
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (window_start TIMESTAMP(3), window_end TIMESTAMP(3), ad_id STRING,
  spend BIGINT, clicks BIGINT, rn BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT window_start, window_end, ad_id, spend, clicks, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY spend DESC, ad_id) AS rn
  FROM (
    SELECT window_start, window_end, ad_id, SUM(bid) AS spend, COUNT(*) AS clicks
    FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '10' SECOND))
    GROUP BY window_start, window_end, ad_id
  )
) WHERE rn <= 3;
