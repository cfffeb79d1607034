-- Regular expressions, time parts and CAST's precision and length rules: REGEXP_EXTRACT (a
-- group, group 0, no match), REGEXP_REPLACE with group references, REGEXP, EXTRACT and HOUR etc.
-- of the time attribute, CAST to VARCHAR(n) (cut) and to a DECIMAL too narrow for some values
-- (NULL).
CREATE TABLE clicks (
  ad_id STRING, user_id STRING, bid BIGINT, ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'data/clicks.ndjson', 'format' = 'json');

CREATE TABLE results (ad_id STRING, user_id STRING, digits STRING, whole STRING, none_found STRING,
  swapped STRING, ends7 BOOLEAN, y BIGINT, mo BIGINT, d BIGINT, h BIGINT, mi BIGINT, s BIGINT,
  short_user STRING, narrow DECIMAL(3, 1)
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT ad_id, user_id,
  REGEXP_EXTRACT(user_id, 'u-(\d)(\d*)', 2),
  REGEXP_EXTRACT(ad_id, '\d+'),
  REGEXP_EXTRACT(ad_id, 'x(\d)', 1),
  REGEXP_REPLACE(ad_id, '([a-z]+)-(\d+)', '$2:$1'),
  REGEXP(user_id, '7$'),
  YEAR(rt), EXTRACT(MONTH FROM rt), EXTRACT(DAY FROM rt), HOUR(rt), MINUTE(rt), EXTRACT(SECOND FROM rt),
  CAST(user_id AS VARCHAR(3)),
  CAST(bid AS DECIMAL(3, 1))
FROM clicks
WHERE bid % 5 = 0;
