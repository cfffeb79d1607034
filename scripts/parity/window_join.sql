-- A window join (LEFT): impressions and clicks per ad and 10 s window, joined on the window and
-- the ad; windows with impressions but no click keep NULLs.
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

CREATE TABLE results (ad_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  imps BIGINT, clicks BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT L.ad_id, L.window_start, L.window_end, L.imps, R.clicks
FROM (
  SELECT ad_id, window_start, window_end, COUNT(*) AS imps
  FROM TABLE(TUMBLE(TABLE impressions, DESCRIPTOR(rt), INTERVAL '10' SECOND))
  GROUP BY ad_id, window_start, window_end
) L LEFT JOIN (
  SELECT ad_id, window_start, window_end, COUNT(*) AS clicks
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(rt), INTERVAL '10' SECOND))
  GROUP BY ad_id, window_start, window_end
) R ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.ad_id = R.ad_id;
