-- An OVER aggregation over the last 10 rows per ad (append-only: every on-time click once).
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT, n BIGINT, total BIGINT, mean BIGINT, hi BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');
INSERT INTO results
SELECT ad_id, user_id, bid, ts, COUNT(*) OVER w, SUM(bid) OVER w, AVG(bid) OVER w, MAX(bid) OVER w
FROM clicks
WINDOW w AS (PARTITION BY ad_id ORDER BY rt ROWS BETWEEN 10 PRECEDING AND CURRENT ROW);
