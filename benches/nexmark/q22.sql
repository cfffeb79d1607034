-- Query 22: Get URL Directories (nexmark-flink q22.sql; run after ddl.sql). The directory
-- structure of each bid's URL by SPLIT_INDEX. The sink is a JSON file instead of a blackhole.

CREATE TABLE nexmark_q22 (
      auction  BIGINT,
      bidder  BIGINT,
      price  BIGINT,
      channel  VARCHAR,
      dir1  VARCHAR,
      dir2  VARCHAR,
      dir3  VARCHAR
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q22', 'format' = 'json');

INSERT INTO nexmark_q22
SELECT
    auction, bidder, price, channel,
    SPLIT_INDEX(url, '/', 3) as dir1,
    SPLIT_INDEX(url, '/', 4) as dir2,
    SPLIT_INDEX(url, '/', 5) as dir3 FROM bid;
