-- Query 19: Auction TOP-10 Price (nexmark-flink q19.sql, as written; run after ddl.sql). The ten
-- highest bids of each auction, ranked: a Top-N over the whole stream, an updating result (a
-- new high bid shifts the ranks below it): the sink is a debezium-json file instead of a
-- blackhole. Bids of one auction with equal prices are ranked by the row's bytes (Flink ranks
-- them in arrival order).

CREATE TABLE nexmark_q19 (
    auction  BIGINT,
    bidder  BIGINT,
    price  BIGINT,
    channel  VARCHAR,
    url  VARCHAR,
    `dateTime`  TIMESTAMP(3),
    extra  VARCHAR,
    rank_number  BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q19', 'format' = 'debezium-json');

INSERT INTO nexmark_q19
SELECT * FROM
(SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid)
WHERE rank_number <= 10;
