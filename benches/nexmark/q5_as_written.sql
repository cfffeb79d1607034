-- Query 5: Hot Items, as nexmark-flink writes it (q5.sql there; run after ddl.sql). q5.sql here
-- is the insert-only rewrite measured against Flink; this is the original: MaxBids is a GROUP BY
-- over the window's results (a group aggregate, an updating result), joined back by a regular
-- join with `num >= maxn`, so the result updates as a window's maximum grows. The sink is a
-- debezium-json file instead of a blackhole; materialised, it holds the rewrite's rows.

CREATE TABLE nexmark_q5 (
  auction  BIGINT,
  num  BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q5_as_written', 'format' = 'debezium-json');

INSERT INTO nexmark_q5
SELECT AuctionBids.auction, AuctionBids.num
 FROM (
   SELECT
     auction,
     count(*) AS num,
     window_start AS starttime,
     window_end AS endtime
     FROM TABLE(
             HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
 ) AS AuctionBids
 JOIN (
   SELECT
     max(CountBids.num) AS maxn,
     CountBids.starttime,
     CountBids.endtime
   FROM (
     SELECT
       count(*) AS num,
       window_start AS starttime,
       window_end AS endtime
     FROM TABLE(
                HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
     ) AS CountBids
   GROUP BY CountBids.starttime, CountBids.endtime
 ) AS MaxBids
 ON AuctionBids.starttime = MaxBids.starttime AND
    AuctionBids.endtime = MaxBids.endtime AND
    AuctionBids.num >= MaxBids.maxn;
