-- Query 0: Pass through (nexmark-flink q0.sql; run after ddl.sql). The sink is a JSON file
-- instead of nexmark-flink's blackhole, so results can be compared.

CREATE TABLE nexmark_q0 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  `dateTime`  TIMESTAMP(3),
  extra  VARCHAR
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q0', 'format' = 'json');

INSERT INTO nexmark_q0
SELECT auction, bidder, price, `dateTime`, extra FROM bid;
