-- COUNT(DISTINCT) over an updating input: per ad, the distinct users among those with at most 3
-- clicks on it so far (the HAVING deletes a user's row at the 4th, a retraction into the count).
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, light_users BIGINT, spends BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');

INSERT INTO results
SELECT ad_id, COUNT(DISTINCT user_id), COUNT(DISTINCT spend)
FROM (SELECT ad_id, user_id, SUM(bid) AS spend FROM clicks GROUP BY ad_id, user_id HAVING COUNT(*) <= 3)
GROUP BY ad_id;
