-- Query 8: Monitor New Users, as nexmark-flink writes it (q8.sql there; run after ddl.sql). q8.sql
-- here is the rewrite measured against Flink (a window join); this is the original: both sides
-- are window aggregations whose bounds are renamed starttime/endtime, so the join is a regular
-- join on the person id and both bounds, which keeps every row (as Flink's without a state TTL).
-- Both sides are insert-only, so the result is too; it holds the rewrite's rows. The sink is a
-- JSON file instead of a blackhole.

CREATE TABLE nexmark_q8 (
  id  BIGINT,
  name  VARCHAR,
  stime  TIMESTAMP(3)
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q8_as_written', 'format' = 'json');

INSERT INTO nexmark_q8
SELECT P.id, P.name, P.starttime
FROM (
  SELECT id, name,
        window_start AS starttime,
        window_end AS endtime
  FROM TABLE(
            TUMBLE(TABLE person, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
  GROUP BY id, name, window_start, window_end
) P
JOIN (
  SELECT seller,
        window_start AS starttime,
        window_end AS endtime
  FROM TABLE(
        TUMBLE(TABLE auction, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
  GROUP BY seller, window_start, window_end
) A
ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime;
