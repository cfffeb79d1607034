-- The ad-spend pipeline of config/ad_spend.toml as Flink SQL: clicks deduplicated, matched to
-- their impression within 10 s, priced at the ad's price valid at click time, and summed per ad
-- and minute. Run it with `sluice run --config config/sql_ad_spend.toml` after
--   sluice loadgen flow --events 1000000 --out data
-- The same file runs on Flink (README "Scaling out on Flink").

-- Deduplication remembers a click id this long (in event time; Flink: the state's TTL).
SET 'table.exec.state.ttl' = '10 min';

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

-- A versioned table: each line is the ad's price from `ts` on.
CREATE TABLE ad_prices (
  ad_id STRING, price DECIMAL(10, 4), ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND,
  PRIMARY KEY (ad_id) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = 'data/flow_prices.ndjson', 'format' = 'json');

CREATE TABLE ad_spend (
  ad_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  clicks BIGINT, spend DECIMAL(38, 4)
) WITH ('connector' = 'filesystem', 'path' = 'out/ad_spend', 'format' = 'json');

CREATE VIEW unique_clicks AS
SELECT click_id, imp_id, ad_id, rt FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY click_id ORDER BY rt ASC) AS rn FROM clicks
) WHERE rn = 1;

CREATE VIEW matched_clicks AS
SELECT i.ad_id, i.imp_id, c.click_id, c.rt
FROM impressions AS i JOIN unique_clicks AS c
  ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '10' SECOND;

CREATE VIEW priced AS
SELECT m.ad_id, m.click_id, m.rt, p.price
FROM matched_clicks AS m
  JOIN ad_prices FOR SYSTEM_TIME AS OF m.rt AS p ON m.ad_id = p.ad_id;

INSERT INTO ad_spend
SELECT ad_id, window_start, window_end, COUNT(*), SUM(price)
FROM TABLE(TUMBLE(TABLE priced, DESCRIPTOR(rt), INTERVAL '1' MINUTE))
GROUP BY ad_id, window_start, window_end;
