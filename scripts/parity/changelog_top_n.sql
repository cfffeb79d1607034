-- Top-N over an updating input: the 3 users with the highest spend per ad, with their rank.
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, user_id STRING, spend BIGINT, rn BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');
INSERT INTO results
SELECT ad_id, user_id, spend, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY ad_id ORDER BY spend DESC, user_id) AS rn
  FROM (SELECT ad_id, user_id, SUM(bid) AS spend FROM clicks GROUP BY ad_id, user_id)
) WHERE rn <= 3;
