-- A GROUP BY over a GROUP BY (retractions into COUNT, SUM, MIN and MAX): the histogram of clicks
-- per user, with the spend range of the users in each bucket.
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (clicks BIGINT, users BIGINT, spend BIGINT, lo BIGINT, hi BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');
INSERT INTO results
SELECT clicks, COUNT(*), SUM(spend), MIN(spend), MAX(spend)
FROM (SELECT user_id, COUNT(*) AS clicks, SUM(bid) AS spend FROM clicks GROUP BY user_id)
GROUP BY clicks;
