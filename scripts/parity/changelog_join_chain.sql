-- A chain of joins in one FROM, joined left to right: impressions with their clicks (inner),
-- then each pair with its impression's even-numbered click count so far (LEFT, over an updating
-- GROUP BY), then every impression again (FULL OUTER on the impression of the pair).
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

CREATE TABLE results (imp_id BIGINT, ad_id STRING, click_id BIGINT, even_clicks BIGINT, imp BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');

INSERT INTO results
SELECT i.imp_id, i.ad_id, c.click_id, k.n, p.imp_id
FROM impressions AS i
JOIN clicks AS c ON i.imp_id = c.imp_id
LEFT JOIN (SELECT imp_id, COUNT(*) AS n FROM clicks WHERE click_id % 2 = 0 GROUP BY imp_id) AS k ON c.imp_id = k.imp_id
FULL OUTER JOIN impressions AS p ON i.imp_id = p.imp_id;
