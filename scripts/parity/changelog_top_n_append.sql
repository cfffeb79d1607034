-- Top-N over an append-only input without the rank column: the two highest bids per ad (ties
-- broken by user and time, so both engines agree on them).
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');
INSERT INTO results
SELECT ad_id, user_id, bid, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY ad_id ORDER BY bid DESC, user_id DESC, ts DESC) AS rn
  FROM clicks
) WHERE rn <= 2;
