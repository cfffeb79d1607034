-- An event-time temporal join against a changelog table: ad prices read as Debezium JSON
-- (creates, updates whose before image carries the old row's time, deletes), each click priced
-- at its ad's row valid at click time; LEFT, so a click before its ad's first price or after
-- its row was deleted keeps NULLs.
CREATE TABLE clicks (
  click_id BIGINT, imp_id BIGINT, ad_id STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/flow_clicks.ndjson', 'format' = 'json');

CREATE TABLE ad_prices (
  ad_id STRING, price DECIMAL(10, 4), ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND,
  PRIMARY KEY (ad_id) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = 'data/flow_price_changes.ndjson',
        'format' = 'debezium-json');

CREATE TABLE results (click_id BIGINT, ad_id STRING, price DECIMAL(10, 4), price_ts BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT c.click_id, c.ad_id, p.price, p.ts
FROM clicks AS c
  LEFT JOIN ad_prices FOR SYSTEM_TIME AS OF c.rt AS p ON c.ad_id = p.ad_id;
