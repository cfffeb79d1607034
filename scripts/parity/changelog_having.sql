-- A HAVING that turns false: users with 2 to 4 clicks so far (a user's row is deleted at the 5th).
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (user_id STRING, clicks BIGINT, spend BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');
INSERT INTO results
SELECT user_id, COUNT(*), SUM(bid) FROM clicks GROUP BY user_id HAVING COUNT(*) BETWEEN 2 AND 4;
