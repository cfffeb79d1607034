-- Flink's string and hash functions over edge-case strings (scripts/parity/builtins_data.py):
-- empty, spaces, Unicode, URLs, Base64 and percent escapes, NULLs.
CREATE TABLE b (
  id BIGINT, s STRING, n BIGINT, d DECIMAL(10, 3), ts BIGINT, u STRING,
  rt AS TO_TIMESTAMP_LTZ(ts, 3)
) WITH ('connector' = 'filesystem', 'path' = 'data/builtins.ndjson', 'format' = 'json');

CREATE TABLE results (id BIGINT,
  c1 STRING, c2 STRING, c3 STRING, c4 STRING, c5 STRING, c6 STRING, c7 STRING, c8 STRING,
  c9 STRING, c10 STRING, c11 STRING, c12 STRING, c13 STRING, c14 INT, c15 INT, c16 INT,
  c17 INT, c18 STRING, c19 STRING, c20 BOOLEAN, c21 BOOLEAN, c22 STRING, c23 STRING,
  c24 STRING, c25 STRING, c26 STRING, c27 STRING, c28 STRING, c29 STRING, c30 STRING,
  c31 STRING, c32 STRING, c33 STRING, c34 STRING, c35 STRING, c36 STRING, c37 STRING,
  c38 INT, c39 STRING
) WITH ('connector' = 'filesystem', 'path' = 'out/result', 'format' = 'json');

INSERT INTO results
SELECT id,
  CONCAT_WS('|', s, u, 'x'), CONCAT_WS(u, s, 'y'), LPAD(s, 8, '*'), RPAD(s, 3, 'ab'),
  REPEAT(s, 2), LEFT(s, 3), RIGHT(s, 4), REVERSE(s), INITCAP(s), LTRIM(s), RTRIM(s),
  BTRIM(s, 'x'), TRIM(LEADING 'h' FROM s), POSITION('l' IN s), LOCATE('l', s, 4), INSTR(s, 'o'),
  ASCII(s), CASE WHEN CHAR_LENGTH(s) >= 2 THEN OVERLAY(s PLACING '#' FROM 2 FOR 1) END,
  ELT(2, s, u, 'z'), STARTSWITH(s, 'he'), ENDSWITH(s, 'ld'), PARSE_URL(s, 'HOST'),
  PARSE_URL(s, 'QUERY', 'k2'), PARSE_URL(s, 'PATH'), PARSE_URL(s, 'REF'), TO_BASE64(s),
  URL_ENCODE(s), URL_DECODE(s), HEX(s), MD5(s), SHA1(s), SHA256(s), SHA2(s, 512), SHA224(u),
  TRIM(TRAILING 'x' FROM s), LPAD(u, 2, 'q'), RTRIM(s, 'd'), INSTR(u, 'a'),
  CASE WHEN CHAR_LENGTH(s) >= 5 THEN OVERLAY(s PLACING 'ZZ' FROM 3) END
FROM b;
