-- The ad-spend pipeline (config/ad_spend.sql) with a running total per ad served from
-- PostgreSQL: every priced click updates its ad's row in `ad_totals` (a GROUP BY without a
-- window: an updating result, upserted by the table's PRIMARY KEY). Make the input and the
-- table first:
--   sluice loadgen flow --events 1000000 --out data
--   scripts/postgres-local.sh start
--   scripts/postgres-local.sh psql -c "CREATE TABLE ad_totals (ad_id TEXT PRIMARY KEY, clicks BIGINT, spend NUMERIC(38, 4))"
-- then run it with `sluice run --config config/sql_ad_totals.toml`. The same SQL runs on Flink
-- (with the JDBC connector on its class path).

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

CREATE TABLE ad_prices (
  ad_id STRING, price DECIMAL(10, 4), ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND,
  PRIMARY KEY (ad_id) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = 'data/flow_prices.ndjson', 'format' = 'json');

-- The running totals: one row per ad, rewritten as its clicks arrive.
CREATE TABLE ad_totals (
  ad_id STRING, clicks BIGINT, spend DECIMAL(38, 4),
  PRIMARY KEY (ad_id) NOT ENFORCED
) WITH (
  'connector' = 'jdbc',
  'url' = 'jdbc:postgresql://127.0.0.1:55432/sluice?user=sluice',
  'table-name' = 'ad_totals'
);

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

INSERT INTO ad_totals
SELECT ad_id, COUNT(*), SUM(price) FROM priced GROUP BY ad_id;
