-- Query 7: Highest Bid (nexmark-flink q7.sql; run after ddl.sql). The bids with the highest price
-- of each 10 s window. The sink is a JSON file instead of a blackhole. (The SELECT writes B.price
-- into the sink's bidder column and B.bidder into price, as nexmark-flink's text does.)
--
-- nexmark-flink's form (B1.`dateTime` is window_end, no time attribute: a regular join that
-- keeps every bid) runs too, as `q7_as_written.sql`, with the same rows; this rewrite is an
-- interval join whose state the watermark clears, the form measured against Flink.

CREATE TABLE nexmark_q7 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  `dateTime`  TIMESTAMP(3),
  extra  VARCHAR
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q7', 'format' = 'json');

-- Rewritten for sluice: nexmark-flink's B1.`dateTime` is window_end, which is not a time
-- attribute, so Flink runs the join as a regular join (state kept forever). Here B1 passes
-- window_time (window_end - 1 ms), the time attribute of the window's results, and the same
-- bounds [window_end - 10 s, window_end] are written on it, so the join is an interval join
-- whose state the watermark clears. Same rows. nexmark-flink's text:
-- INSERT INTO nexmark_q7
-- SELECT B.auction, B.price, B.bidder, B.`dateTime`, B.extra
-- from bid B
-- JOIN (
--   SELECT MAX(price) AS maxprice, window_end as `dateTime`
--   FROM TABLE(
--           TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
--   GROUP BY window_start, window_end
-- ) B1
-- ON B.price = B1.maxprice
-- WHERE B.`dateTime` BETWEEN B1.`dateTime`  - INTERVAL '10' SECOND AND B1.`dateTime`;

INSERT INTO nexmark_q7
SELECT B.auction, B.price, B.bidder, B.`dateTime`, B.extra
from bid B
JOIN (
  SELECT MAX(price) AS maxprice, window_time
  FROM TABLE(
          TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end, window_time
) B1
ON B.price = B1.maxprice
WHERE B.`dateTime` BETWEEN B1.window_time - INTERVAL '9.999' SECOND AND B1.window_time + INTERVAL '0.001' SECOND;
