-- A FULL OUTER JOIN on the ad: per-ad impression counts beside per-ad click counts, both
-- updating inputs, with a condition on the right side.
CREATE TABLE impressions (
  imp_id BIGINT, ad_id STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/flow_impressions.ndjson', 'format' = 'json');

CREATE TABLE clicks (
  click_id BIGINT, imp_id BIGINT, ad_id STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/flow_clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, impressions BIGINT, click_ad STRING, clicks BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');
INSERT INTO results
SELECT i.ad_id, i.n, c.ad_id, c.n
FROM (SELECT ad_id, COUNT(*) AS n FROM impressions GROUP BY ad_id) AS i
FULL OUTER JOIN (SELECT ad_id, COUNT(*) AS n FROM clicks WHERE click_id % 3 <> 0 GROUP BY ad_id) AS c
ON i.ad_id = c.ad_id;
