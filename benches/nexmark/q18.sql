-- Query 18: Find last bid (nexmark-flink q18.sql, as written; run after ddl.sql). The last bid
-- of each bidder on each auction: a deduplication keeping the last row per key, an updating
-- result (each newer bid replaces the one before): the sink is a debezium-json file instead of
-- a blackhole. Bids of one key with equal times keep the greater row (sluice ranks ties by the
-- row's bytes, where Flink keeps the later arrival).

CREATE TABLE nexmark_q18 (
    auction  BIGINT,
    bidder  BIGINT,
    price  BIGINT,
    channel  VARCHAR,
    url  VARCHAR,
    `dateTime`  TIMESTAMP(3),
    extra  VARCHAR
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q18', 'format' = 'debezium-json');

INSERT INTO nexmark_q18
SELECT auction, bidder, price, channel, url, `dateTime`, extra
 FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY `dateTime` DESC) AS rank_number
       FROM bid)
 WHERE rank_number <= 1;
