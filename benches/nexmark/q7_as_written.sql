-- Query 7: Highest Bid, as nexmark-flink writes it (q7.sql there; run after ddl.sql). q7.sql here
-- is the rewrite measured against Flink (an interval join on the window's time attribute); this
-- is the original: B1.`dateTime` is window_end, not a time attribute, so the join is a regular
-- join keeping every bid (as Flink's without a state TTL), and its WHERE moves that timestamp by
-- an interval. Both inputs are insert-only, so the result is too; it holds the rewrite's rows.
-- The sink is a JSON file instead of a blackhole. (The SELECT writes B.price into the sink's
-- bidder column and B.bidder into price, as nexmark-flink's text does.)

CREATE TABLE nexmark_q7 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  `dateTime`  TIMESTAMP(3),
  extra  VARCHAR
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q7_as_written', 'format' = 'json');

INSERT INTO nexmark_q7
SELECT B.auction, B.price, B.bidder, B.`dateTime`, B.extra
from bid B
JOIN (
  SELECT MAX(price) AS maxprice, window_end as `dateTime`
  FROM TABLE(
          TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end
) B1
ON B.price = B1.maxprice
WHERE B.`dateTime` BETWEEN B1.`dateTime`  - INTERVAL '10' SECOND AND B1.`dateTime`;
