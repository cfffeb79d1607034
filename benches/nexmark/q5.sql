-- Query 5: Hot Items (nexmark-flink q5.sql; run after ddl.sql). Which auctions have seen the
-- most bids in the last 10 seconds, updated every 2 seconds? The sink is a JSON file instead of
-- a blackhole.

CREATE TABLE nexmark_q5 (
  auction  BIGINT,
  num  BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q5', 'format' = 'json');

-- Rewritten for sluice, same rows in Flink. sluice refuses MaxBids' GROUP BY over the window's
-- results ("GROUP BY needs a window table function (FROM TABLE(TUMBLE(...))): a GROUP BY over a
-- whole stream is an updating result, which sluice does not produce yet"). The largest count of
-- a window is the count of its window Top-1 (whichever tied auction ranks first, its count is the
-- maximum), and the join back is a window join on window_start/window_end (not renamed) with
-- `num >= maxn` filtering the pairs, so every auction tied at the maximum is kept, as in the
-- original. nexmark-flink's text:
--
-- INSERT INTO nexmark_q5
-- SELECT AuctionBids.auction, AuctionBids.num
--  FROM (
--    SELECT
--      auction,
--      count(*) AS num,
--      window_start AS starttime,
--      window_end AS endtime
--      FROM TABLE(
--              HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
--      GROUP BY auction, window_start, window_end
--  ) AS AuctionBids
--  JOIN (
--    SELECT
--      max(CountBids.num) AS maxn,
--      CountBids.starttime,
--      CountBids.endtime
--    FROM (
--      SELECT
--        count(*) AS num,
--        window_start AS starttime,
--        window_end AS endtime
--      FROM TABLE(
--                 HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
--      GROUP BY auction, window_start, window_end
--      ) AS CountBids
--    GROUP BY CountBids.starttime, CountBids.endtime
--  ) AS MaxBids
--  ON AuctionBids.starttime = MaxBids.starttime AND
--     AuctionBids.endtime = MaxBids.endtime AND
--     AuctionBids.num >= MaxBids.maxn;

INSERT INTO nexmark_q5
SELECT AuctionBids.auction, AuctionBids.num
 FROM (
   SELECT auction, count(*) AS num, window_start, window_end
   FROM TABLE(
           HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
   GROUP BY auction, window_start, window_end
 ) AS AuctionBids
 JOIN (
   SELECT num AS maxn, window_start, window_end
   FROM (
     SELECT *,
       ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY num DESC) AS rownum
     FROM (
       SELECT auction, count(*) AS num, window_start, window_end
       FROM TABLE(
              HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
       GROUP BY auction, window_start, window_end))
   WHERE rownum <= 1
 ) AS MaxBids
 ON AuctionBids.window_start = MaxBids.window_start AND
    AuctionBids.window_end = MaxBids.window_end AND
    AuctionBids.num >= MaxBids.maxn;
