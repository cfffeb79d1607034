-- Query 20: Expand bid with auction (nexmark-flink q20.sql; run after ddl.sql). Each bid of an
-- auction of category 10 with the auction's columns. The sink is a JSON file instead of a
-- blackhole.
--
-- A regular join: Flink keeps both sides' rows for `table.exec.state.ttl` in processing time
-- (none set, as in nexmark-flink: forever; scripts/nexmark.sh runs Flink so), sluice for that
-- long in event time. A bid's auction is one of the last 100 auctions (under 0.2 s of events) or
-- a hot one, so ten seconds join every bid with its auction, as Flink's unbounded state does.
SET 'table.exec.state.ttl' = '10 s';

CREATE TABLE nexmark_q20 (
    auction  BIGINT,
    bidder  BIGINT,
    price  BIGINT,
    channel  VARCHAR,
    url  VARCHAR,
    bid_dateTime  TIMESTAMP(3),
    bid_extra  VARCHAR,

    itemName  VARCHAR,
    description  VARCHAR,
    initialBid  BIGINT,
    reserve  BIGINT,
    auction_dateTime  TIMESTAMP(3),
    expires  TIMESTAMP(3),
    seller  BIGINT,
    category  BIGINT,
    auction_extra  VARCHAR
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q20', 'format' = 'json');

INSERT INTO nexmark_q20
SELECT
    auction, bidder, price, channel, url, B.`dateTime`, B.extra,
    itemName, description, initialBid, reserve, A.`dateTime`, expires, seller, category, A.extra
FROM
    bid AS B INNER JOIN auction AS A on B.auction = A.id
WHERE A.category = 10;
