-- A chain of joins in one FROM, joined left to right: impressions with their clicks (inner),
-- then each pair with its ad's click count so far (LEFT, over an updating GROUP BY), then the
-- ad's impression count (FULL OUTER on the ad of the pair).
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

CREATE TABLE results (imp_id BIGINT, ad_id STRING, click_id BIGINT, ad_clicks BIGINT, ad_imps BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');

INSERT INTO results
SELECT i.imp_id, i.ad_id, c.click_id, a.n, p.n
FROM impressions AS i
JOIN clicks AS c ON i.imp_id = c.imp_id
LEFT JOIN (SELECT ad_id, COUNT(*) AS n FROM clicks WHERE click_id % 2 = 0 GROUP BY ad_id) AS a ON i.ad_id = a.ad_id
FULL OUTER JOIN (SELECT ad_id, COUNT(*) AS n FROM impressions GROUP BY ad_id) AS p ON c.ad_id = p.ad_id;
