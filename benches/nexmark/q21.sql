-- Query 21: Add channel id (nexmark-flink q21.sql; run after ddl.sql). A channel_id column by
-- CASE WHEN and REGEXP_EXTRACT. The sink is a JSON file instead of a blackhole. Needs
-- REGEXP_EXTRACT, landing in sluice separately: not in the tested or benchmarked set yet.

CREATE TABLE nexmark_q21 (
    auction  BIGINT,
    bidder  BIGINT,
    price  BIGINT,
    channel  VARCHAR,
    channel_id  VARCHAR
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q21', 'format' = 'json');

INSERT INTO nexmark_q21
SELECT
    auction, bidder, price, channel,
    CASE
        WHEN lower(channel) = 'apple' THEN '0'
        WHEN lower(channel) = 'google' THEN '1'
        WHEN lower(channel) = 'facebook' THEN '2'
        WHEN lower(channel) = 'baidu' THEN '3'
        ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)
        END
    AS channel_id FROM bid
    where REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) is not null or
          lower(channel) in ('apple', 'google', 'facebook', 'baidu');
