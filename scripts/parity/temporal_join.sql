-- An event-time temporal join: each click priced at its ad's price valid at click time, with
-- exact decimal arithmetic; LEFT, so a click before its ad's first price keeps NULLs.
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
) WITH ('connector' = 'filesystem', 'path' = 'data/flow_prices.ndjson', 'format' = 'json');

CREATE TABLE results (click_id BIGINT, ad_id STRING, price DECIMAL(10, 4), triple DECIMAL(12, 4)
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT c.click_id, c.ad_id, p.price, p.price * 3
FROM clicks AS c
  LEFT JOIN ad_prices FOR SYSTEM_TIME AS OF c.rt AS p ON c.ad_id = p.ad_id;
