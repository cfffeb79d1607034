-- Query 14: Calculation (nexmark-flink q14.sql; run after ddl.sql). Bid times as day/night types
-- and bids in a price range. The sink is a JSON file instead of a blackhole.
--
-- Rewritten for sluice, same rows in Flink: sluice has no user-defined functions, so
-- nexmark-flink's UDF count_char(extra, 'c')
-- (the number of 'c' characters in extra) is CHAR_LENGTH(extra) - CHAR_LENGTH(REPLACE(extra,
-- 'c', '')). nexmark-flink's text:
--
-- CREATE FUNCTION count_char AS 'com.github.nexmark.flink.udf.CountChar';
-- ...
-- INSERT INTO nexmark_q14
-- SELECT
--     auction,
--     bidder,
--     0.908 * price as price,
--     CASE
--         WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime'
--         WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'
--         ELSE 'otherTime'
--     END AS bidTimeType,
--     `dateTime`,
--     extra,
--     count_char(extra, 'c') AS c_counts
-- FROM bid
-- WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;

CREATE TABLE nexmark_q14 (
    auction BIGINT,
    bidder BIGINT,
    price  DECIMAL(23, 3),
    bidTimeType VARCHAR,
    `dateTime` TIMESTAMP(3),
    extra VARCHAR,
    c_counts BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q14', 'format' = 'json');

INSERT INTO nexmark_q14
SELECT
    auction,
    bidder,
    0.908 * price as price,
    CASE
        WHEN HOUR(`dateTime`) >= 8
            AND HOUR(`dateTime`) <= 18 THEN 'dayTime'
        WHEN HOUR(`dateTime`) <= 6
            OR HOUR(`dateTime`) >= 20 THEN 'nightTime'
        ELSE 'otherTime'
    END AS bidTimeType,
    `dateTime`,
    extra,
    CHAR_LENGTH(extra) - CHAR_LENGTH(REPLACE(extra, 'c', '')) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
