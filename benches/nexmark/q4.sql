-- Query 4: Average Price for a Category (nexmark-flink q4.sql, as written; run after ddl.sql).
-- The average closing price of auctions per category: each auction's highest bid within its
-- lifetime (a regular join of auctions and bids, then MAX per auction), averaged per category.
-- Both GROUP BYs are updating results: the sink is a debezium-json file instead of a blackhole.

CREATE TABLE nexmark_q4 (
  id BIGINT,
  final BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q4', 'format' = 'debezium-json');

INSERT INTO nexmark_q4
SELECT
    Q.category,
    AVG(Q.final)
FROM (
    SELECT MAX(B.price) AS final, A.category
    FROM auction A, bid B
    WHERE A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires
    GROUP BY A.id, A.category
) Q
GROUP BY Q.category;
