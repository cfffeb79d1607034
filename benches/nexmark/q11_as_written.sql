-- Query 11: User Sessions, as nexmark-flink writes it (q11.sql there; run after ddl.sql): the
-- legacy group window `GROUP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND)` with
-- SESSION_START/SESSION_END, which sluice compiles as the SESSION table function per bidder
-- (q11.sql here, the form measured against Flink). The sink is a JSON file instead of a
-- blackhole; the rows are the rewrite's.

CREATE TABLE nexmark_q11 (
  bidder BIGINT,
  bid_count BIGINT,
  starttime TIMESTAMP(3),
  endtime TIMESTAMP(3)
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q11_as_written', 'format' = 'json');

INSERT INTO nexmark_q11
SELECT
    B.bidder,
    count(*) as bid_count,
    SESSION_START(B.`dateTime`, INTERVAL '10' SECOND) as starttime,
    SESSION_END(B.`dateTime`, INTERVAL '10' SECOND) as endtime
FROM bid B
GROUP BY B.bidder, SESSION(B.`dateTime`, INTERVAL '10' SECOND);
