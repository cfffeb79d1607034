-- Outer joins whose ON reads both sides beyond the key equality: an impression matches only the
-- clicks that came within 3 s of it, or whose id is above its own (the others leave it
-- NULL-padded); a FULL join pads each side by its own matches.
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

CREATE TABLE lj (imp_id BIGINT, ad_id STRING, click_id BIGINT, delay BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/lj', 'format' = 'debezium-json');

CREATE TABLE fj (imp_id BIGINT, click_id BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/fj', 'format' = 'debezium-json');

EXECUTE STATEMENT SET BEGIN
INSERT INTO lj
SELECT i.imp_id, i.ad_id, c.click_id, c.ts - i.ts FROM impressions AS i LEFT JOIN clicks AS c
  ON i.imp_id = c.imp_id AND c.ts - i.ts < 3000;
INSERT INTO fj
SELECT i.imp_id, c.click_id FROM impressions AS i FULL OUTER JOIN clicks AS c
  ON i.imp_id = c.imp_id AND (c.click_id * 2 > i.imp_id OR c.ts > i.ts + 1000) AND i.ad_id <> 'ad-2';
END;
