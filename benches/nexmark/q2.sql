-- Query 2: Selection (nexmark-flink q2.sql; run after ddl.sql). Bids of every 123rd auction.
-- The sink is a JSON file instead of a blackhole.

CREATE TABLE nexmark_q2 (
  auction  BIGINT,
  price  BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q2', 'format' = 'json');

-- Rewritten for sluice, which has no MOD function: `auction % 123` is the same in Flink.
-- nexmark-flink's text:
-- INSERT INTO nexmark_q2
-- SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
INSERT INTO nexmark_q2
SELECT auction, price FROM bid WHERE auction % 123 = 0;
