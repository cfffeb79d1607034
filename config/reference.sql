-- The reference scenario of config/reference.toml as Flink SQL: duplicate clicks removed, the
-- unique clicks matched to their impression within 10 s (LEFT: an impression without a click in
-- time appears once, with NULLs), and orders priced at the FX rate valid at order time. Run it
-- with `sluice run --config config/sql_reference.toml`; inputs as config/reference.toml says. SQL
-- has no late side output: late clicks are counted in the run summary instead.

SET 'table.exec.state.ttl' = '10 min';

CREATE TABLE impressions (
  imp_id STRING, ad_id STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/impressions.ndjson', 'format' = 'json');

CREATE TABLE clicks (
  click_id STRING, imp_id STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE orders (
  order_id BIGINT, currency STRING, amount DECIMAL(12, 2), ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/orders.ndjson', 'format' = 'json');

CREATE TABLE fx_rates (
  currency STRING, rate DECIMAL(12, 6), ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '5' SECOND,
  PRIMARY KEY (currency) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = 'data/fx_rates.ndjson', 'format' = 'json');

CREATE TABLE unique_out (click_id STRING, imp_id STRING, ts BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'out/sql_unique_clicks', 'format' = 'json');
CREATE TABLE matched_out (imp_id STRING, ad_id STRING, click_id STRING, click_ts BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'out/sql_matched', 'format' = 'json');
CREATE TABLE orders_usd (order_id BIGINT, currency STRING, ts BIGINT, amount_usd DECIMAL(24, 8))
  WITH ('connector' = 'filesystem', 'path' = 'out/sql_orders_usd', 'format' = 'json');

CREATE VIEW unique_clicks AS
SELECT click_id, imp_id, ts, rt FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY click_id ORDER BY rt ASC) AS rn FROM clicks
) WHERE rn = 1;

EXECUTE STATEMENT SET BEGIN
INSERT INTO unique_out SELECT click_id, imp_id, ts FROM unique_clicks;
INSERT INTO matched_out
  SELECT i.imp_id, i.ad_id, c.click_id, c.ts
  FROM impressions AS i LEFT JOIN unique_clicks AS c
    ON i.imp_id = c.imp_id AND c.rt BETWEEN i.rt AND i.rt + INTERVAL '10' SECOND;
INSERT INTO orders_usd
  SELECT o.order_id, o.currency, o.ts, o.amount * r.rate
  FROM orders AS o LEFT JOIN fx_rates FOR SYSTEM_TIME AS OF o.rt AS r ON o.currency = r.currency;
END;
