-- Deduplication: the first click of each click id in event time.
SET 'table.exec.state.ttl' = '10 min';
CREATE TABLE clicks (
  click_id BIGINT, imp_id BIGINT, ad_id STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/flow_clicks.ndjson', 'format' = 'json');

CREATE TABLE results (click_id BIGINT, imp_id BIGINT, ad_id STRING, ts BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT click_id, imp_id, ad_id, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY click_id ORDER BY rt ASC) AS rn FROM clicks
) WHERE rn = 1;
