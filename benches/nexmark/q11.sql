-- Query 11: User Sessions (nexmark-flink q11.sql; run after ddl.sql). How many bids did a user
-- make in each session they were active (10 s gap)? The sink is a JSON file instead of a
-- blackhole.

CREATE TABLE nexmark_q11 (
  bidder BIGINT,
  bid_count BIGINT,
  starttime TIMESTAMP(3),
  endtime TIMESTAMP(3)
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q11', 'format' = 'json');

-- Rewritten for sluice, which has the window table functions but not the legacy GROUP BY
-- SESSION(...) group window: the SESSION TVF per bidder, whose window_start/window_end are
-- SESSION_START/SESSION_END (Flink 2.3 runs both forms with the same rows).
-- nexmark-flink's text:
-- INSERT INTO nexmark_q11
-- SELECT
--     B.bidder,
--     count(*) as bid_count,
--     SESSION_START(B.`dateTime`, INTERVAL '10' SECOND) as starttime,
--     SESSION_END(B.`dateTime`, INTERVAL '10' SECOND) as endtime
-- FROM bid B
-- GROUP BY B.bidder, SESSION(B.`dateTime`, INTERVAL '10' SECOND);
INSERT INTO nexmark_q11
SELECT
    B.bidder,
    count(*) as bid_count,
    window_start as starttime,
    window_end as endtime
FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND)) B
GROUP BY B.bidder, window_start, window_end;
