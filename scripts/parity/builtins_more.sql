-- REGEXP_COUNT/INSTR/SUBSTR, TRANSLATE, IS_ALPHA/IS_DIGIT/IS_DECIMAL, INET_ATON/INET_NTOA and
-- JSON_QUOTE/JSON_UNQUOTE, DATE_FORMAT of a string, over edge-case strings (scripts/parity/builtins_data.py).
CREATE TABLE b (
  id BIGINT, s STRING, n BIGINT, d DECIMAL(10, 3), ts BIGINT, u STRING
) WITH ('connector' = 'filesystem', 'path' = 'data/builtins.ndjson', 'format' = 'json');

CREATE TABLE results (id BIGINT,
  r1 INT, r2 INT, r3 STRING, r4 INT, t1 STRING, t2 STRING, a1 BOOLEAN, a2 BOOLEAN, a3 BOOLEAN,
  a4 BOOLEAN, i1 BIGINT, i2 STRING, j1 STRING, j2 STRING, j3 STRING, f1 STRING,
  e1 BOOLEAN, e2 BOOLEAN, e3 STRING, e4 STRING, e5 BOOLEAN, e6 BOOLEAN, e7 INT, e8 INT, e9 STRING,
  e10 STRING, e11 STRING, e12 STRING, e13 STRING, e14 STRING, e15 STRING, e16 STRING, e17 STRING,
  e18 STRING, e19 STRING, e20 STRING, e21 STRING, e22 STRING
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT id,
  REGEXP_COUNT(s, '[a-z]+'), REGEXP_INSTR(s, '[0-9]'), REGEXP_SUBSTR(s, '[0-9]+'),
  REGEXP_COUNT(u, 'l'), TRANSLATE(s, 'lo', 'L'), TRANSLATE(s, 'abc', 'xyz'),
  IS_ALPHA(s), IS_DIGIT(s), IS_DECIMAL(s), IS_DECIMAL(u), INET_ATON(CONCAT('10.0.', s)),
  INET_NTOA(ABS(n)), JSON_QUOTE(s), JSON_UNQUOTE(s), JSON_UNQUOTE(JSON_QUOTE(s)),
  DATE_FORMAT(s, 'yyyy/MM/dd HH:mm'),
  STARTSWITH(u, 'a'), ENDSWITH(u, 'c'), REGEXP_SUBSTR(u, '[a-z]+'), TRANSLATE(u, 'ab', ''),
  IS_ALPHA(u), IS_DIGIT(u), LOCATE('-', s), INSTR(s, ''), CONCAT_WS('', u, s), SHA384(s),
  SHA512(u), TO_BASE64(u), FROM_BASE64(TO_BASE64(s)), URL_DECODE(URL_ENCODE(s)), LPAD(s, 0, 'x'),
  ELT(3, s, u), REPEAT(u, 0), LEFT(s, -1), RIGHT(u, 100), SHA2(s, 224), RPAD(u, 5, '-'),
  REVERSE(u)
FROM b;
