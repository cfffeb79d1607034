-- Outer joins with conditions in ON that read one side: on the outer side they decide whether a
-- row may match (it still comes out, NULL-padded), on the other they filter it first.
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

CREATE TABLE lj (imp_id BIGINT, ad_id STRING, click_id BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/lj', 'format' = 'debezium-json');

CREATE TABLE fj (imp_id BIGINT, ad_id STRING, click_id BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/fj', 'format' = 'debezium-json');

EXECUTE STATEMENT SET BEGIN
INSERT INTO lj
SELECT i.imp_id, i.ad_id, c.click_id FROM impressions AS i LEFT JOIN clicks AS c
  ON i.imp_id = c.imp_id AND c.click_id % 3 <> 0 AND i.ad_id <> 'ad-1';
INSERT INTO fj
SELECT i.imp_id, i.ad_id, c.click_id FROM impressions AS i FULL OUTER JOIN clicks AS c
  ON i.imp_id = c.imp_id AND i.ad_id <> 'ad-2' AND c.click_id % 2 = 0;
END;
