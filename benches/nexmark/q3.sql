-- Query 3: Local Item Suggestion (nexmark-flink q3.sql; run after ddl.sql). Who is selling in
-- particular US states? Auctions of category 10 joined with their seller when the seller lives
-- in OR, ID or CA. The sink is a JSON file instead of a blackhole.
--
-- A regular join: Flink keeps both sides' rows for `table.exec.state.ttl` in processing time
-- (none set, as in nexmark-flink: forever; scripts/nexmark.sh runs Flink so), sluice for that
-- long in event time. A seller is one of the last 1000 people (5 s of events at 10 000 events/s)
-- or up to 10 people ahead, so one minute joins every auction with its seller, as Flink's
-- unbounded state does.
SET 'table.exec.state.ttl' = '1 min';

CREATE TABLE nexmark_q3 (
  name  VARCHAR,
  city  VARCHAR,
  state  VARCHAR,
  id  BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark_q3', 'format' = 'json');

INSERT INTO nexmark_q3
SELECT
    P.name, P.city, P.state, A.id
FROM
    auction AS A INNER JOIN person AS P on A.seller = P.id
WHERE
    A.category = 10 and (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');
