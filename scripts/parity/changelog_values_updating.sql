-- MIN/MAX of strings over an updating input (a GROUP BY over a GROUP BY): each retraction of
-- the least or greatest user falls back to the next. Per number of clicks, the least and greatest
-- user with that many clicks on one ad, and the ads' range.
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (clicks BIGINT, pairs BIGINT, lo_user STRING, hi_user STRING, lo_ad STRING,
  hi_ad STRING
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'debezium-json');
INSERT INTO results
SELECT clicks, COUNT(*), MIN(user_id), MAX(user_id), MIN(ad_id), MAX(UPPER(ad_id))
FROM (SELECT ad_id, user_id, COUNT(*) AS clicks FROM clicks GROUP BY ad_id, user_id)
GROUP BY clicks;
