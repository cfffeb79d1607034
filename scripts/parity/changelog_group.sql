-- GROUP BY over a whole stream (an updating result, materialised): per ad, every aggregate.
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, clicks BIGINT, spend BIGINT, lo BIGINT, hi BIGINT, mean BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');
INSERT INTO results
SELECT ad_id, COUNT(*), SUM(bid), MIN(bid), MAX(bid), AVG(bid) FROM clicks GROUP BY ad_id;
