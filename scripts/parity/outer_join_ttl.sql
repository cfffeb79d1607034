-- Outer regular joins with a state TTL: sluice keeps each row for the TTL in event time and pads
-- an unmatched row once it expires (appends only); Flink pads at once and takes the padding back
-- at the first match. With a TTL longer than the data's span in event time (and its run in
-- processing time), both materialise to the full outer join. On-time data: an event-time TTL
-- drops rows behind the watermark as late, which Flink's regular join never does.
SET 'table.exec.state.ttl' = '1 h';

CREATE TABLE impressions (
  imp_id BIGINT, ad_id STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/ontime/flow_impressions.ndjson', 'format' = 'json');

CREATE TABLE clicks (
  click_id BIGINT, imp_id BIGINT, ad_id STRING, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/ontime/flow_clicks.ndjson', 'format' = 'json');

CREATE TABLE lj (imp_id BIGINT, ad_id STRING, click_id BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/lj', 'format' = 'debezium-json');

CREATE TABLE fj (imp_id BIGINT, click_id BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/fj', 'format' = 'debezium-json');

EXECUTE STATEMENT SET BEGIN
INSERT INTO lj
SELECT i.imp_id, i.ad_id, c.click_id FROM impressions AS i LEFT JOIN clicks AS c
  ON i.imp_id = c.imp_id AND c.click_id % 3 <> 0;
INSERT INTO fj
SELECT i.imp_id, c.click_id FROM impressions AS i FULL OUTER JOIN clicks AS c
  ON i.imp_id = c.imp_id AND i.ad_id <> 'ad-2';
END;
