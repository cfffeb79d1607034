-- A filter and a projection: a computed column, CASE, CAST, SUBSTRING, TRIM, REPLACE,
-- SPLIT_INDEX, DATE_FORMAT, TO_TIMESTAMP_LTZ, IN, BETWEEN, arithmetic, string functions, the time
-- attribute written as TIMESTAMP_LTZ(3).
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  bid_cents AS bid * 100,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, tier STRING, doubled BIGINT, label STRING, rt TIMESTAMP_LTZ(3),
  bid_text STRING, bid_back BIGINT, scaled DECIMAL(12, 1), bid_dec STRING, at_text STRING, ltz TIMESTAMP_LTZ(3), cents BIGINT,
  tail STRING, mid STRING, trimmed STRING, replaced STRING, part STRING
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT UPPER(ad_id),
  CASE WHEN bid >= 400 THEN 'high' WHEN bid BETWEEN 100 AND 399 THEN 'mid' ELSE 'low' END,
  bid * 2 + 1,
  CONCAT(ad_id, '/', user_id),
  rt,
  CAST(bid AS STRING), CAST(CAST(bid AS STRING) AS BIGINT),
  CAST(CAST(bid AS DECIMAL(10, 2)) * 1.25 AS DECIMAL(12, 1)), CAST(CAST(bid AS DECIMAL(10, 2)) AS STRING),
  DATE_FORMAT(rt, 'yyyy-MM-dd HH:mm:ss.SSS'), TO_TIMESTAMP_LTZ(ts, 3), bid_cents,
  SUBSTRING(ad_id FROM 4), SUBSTRING(user_id, 2, 3), TRIM(CONCAT('  ', ad_id, ' ')),
  REPLACE(ad_id, 'ad-', 'AD'), SPLIT_INDEX(ad_id, '-', 1)
FROM clicks
WHERE ad_id IN ('ad-0', 'ad-1', 'ad-2', 'ad-3') OR bid % 7 = 0;
