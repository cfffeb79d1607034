-- Query 8: Monitor New Users (nexmark-flink q8.sql; run after ddl.sql). Persons who entered the
-- system and created an auction in the same 10 s window. The sink is a JSON file instead of a
-- blackhole.

CREATE TABLE nexmark_q8 (
  id  BIGINT,
  name  VARCHAR,
  stime  TIMESTAMP(3)
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q8', 'format' = 'json');

-- Rewritten for sluice, same rows in Flink: sluice sees a window join only on the names
-- window_start/window_end (not renamed to starttime/endtime), and a window needs an aggregate
-- (a GROUP BY without one is refused), so each side counts its rows (COUNT(*) AS n, unused).
-- nexmark-flink's text:
-- INSERT INTO nexmark_q8
-- SELECT P.id, P.name, P.starttime
-- FROM (
--   SELECT id, name,
--         window_start AS starttime,
--         window_end AS endtime
--   FROM TABLE(
--             TUMBLE(TABLE person, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
--   GROUP BY id, name, window_start, window_end
-- ) P
-- JOIN (
--   SELECT seller,
--         window_start AS starttime,
--         window_end AS endtime
--   FROM TABLE(
--         TUMBLE(TABLE auction, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
--   GROUP BY seller, window_start, window_end
-- ) A
-- ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime;
INSERT INTO nexmark_q8
SELECT P.id, P.name, P.window_start
FROM (
  SELECT id, name, window_start, window_end, COUNT(*) AS n
  FROM TABLE(
            TUMBLE(TABLE person, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
  GROUP BY id, name, window_start, window_end
) P
JOIN (
  SELECT seller, window_start, window_end, COUNT(*) AS n
  FROM TABLE(
        TUMBLE(TABLE auction, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
  GROUP BY seller, window_start, window_end
) A
ON P.id = A.seller AND P.window_start = A.window_start AND P.window_end = A.window_end;
