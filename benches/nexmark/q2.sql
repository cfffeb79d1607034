-- Query 2: Selection (nexmark-flink q2.sql; run after ddl.sql). Bids of every 123rd auction.
-- The sink is a JSON file instead of a blackhole.

CREATE TABLE nexmark_q2 (
  auction  BIGINT,
  price  BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q2', 'format' = 'json');

INSERT INTO nexmark_q2
SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
