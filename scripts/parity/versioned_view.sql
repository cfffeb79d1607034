-- A temporal join on Flink's versioned view: the prices as a plain changelog (no key), made a
-- versioned table by ROW_NUMBER ... ORDER BY rt DESC, rn = 1; LEFT, so a click before its
-- ad's first price keeps NULLs.
CREATE TABLE clicks (
  click_id BIGINT, imp_id BIGINT, ad_id STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/flow_clicks.ndjson', 'format' = 'json');

CREATE TABLE price_log (
  ad_id STRING, price DECIMAL(10, 4), ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/flow_prices.ndjson', 'format' = 'json');

CREATE VIEW versioned_prices AS
SELECT ad_id, price, rt FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY ad_id ORDER BY rt DESC) AS rn FROM price_log
) WHERE rn = 1;

CREATE TABLE results (click_id BIGINT, ad_id STRING, price DECIMAL(10, 4), triple DECIMAL(12, 4)
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT c.click_id, c.ad_id, p.price, p.price * 3
FROM clicks AS c
  LEFT JOIN versioned_prices FOR SYSTEM_TIME AS OF c.rt AS p ON c.ad_id = p.ad_id;
