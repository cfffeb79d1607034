-- Query 1: Currency conversion (nexmark-flink q1.sql; run after ddl.sql). Convert each bid value
-- from dollars to euros. The sink is a JSON file instead of a blackhole.

CREATE TABLE nexmark_q1 (
  auction  BIGINT,
  bidder  BIGINT,
  price  DECIMAL(23, 3),
  `dateTime`  TIMESTAMP(3),
  extra  VARCHAR
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q1', 'format' = 'json');

INSERT INTO nexmark_q1
SELECT
    auction,
    bidder,
    0.908 * price as price, -- convert dollar to euro
    `dateTime`,
    extra
FROM bid;
