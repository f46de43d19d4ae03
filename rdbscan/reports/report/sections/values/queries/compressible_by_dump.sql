-- name: compressible_by_dump
-- answers: Per dump, what its report alone says of its string values that compress (compressible,
--          over that dump's keys): the strings counted, their length and stored bytes (for the
--          ratio), the memory compressing them in the client would save, and the family with the
--          most to save; GROUP BY dump_id, for a report over many dumps (values/build.py by_dump).
--          Everything up to the families is compressible's, which says why
--          (tests/test_multi_dump.py holds the two to the same steps).
-- params:
--   compress_min_bytes (1024) strings longer than this many bytes are counted
--
-- A string's stored size comes from its record's size in the file (keys.serialized_bytes) less
-- what precedes the value: the expiry (9 bytes; 5 in RDB versions before 6, which stored seconds),
-- the LRU idle time (1 + its length encoding), the LFU counter (2), the type byte and the key
-- (its length encoding and bytes). An LZF value is 0xC3, the compressed and the uncompressed
-- lengths (length encodings: 1, 2, 5 or 9 bytes) and the payload.
CREATE OR REPLACE TEMP MACRO rdb_len_size(n) AS
    CASE WHEN n < 64 THEN 1 WHEN n < 16384 THEN 2 WHEN n < 4294967296 THEN 5 ELSE 9 END;
WITH s AS (
    SELECT k.dump_id, k.pattern, k.length, k.memory_bytes,
           k.serialized_bytes
             - CASE WHEN k.expire_at_ms IS NULL THEN 0 WHEN d.rdb_version < 6 THEN 5 ELSE 9 END
             - CASE WHEN k.idle_seconds IS NULL THEN 0 ELSE 1 + rdb_len_size(k.idle_seconds) END
             - CASE WHEN k.lfu_freq IS NULL THEN 0 ELSE 2 END
             - 1 - rdb_len_size(k.key_length) - k.key_length AS value_bytes
    FROM rkeys AS k JOIN dumps AS d USING (dump_id)
    WHERE k.type = 'string' AND k.length > 20
), v AS (
    SELECT dump_id, pattern, length, memory_bytes,
           -- LZF (0xC3, two lengths, payload) when shorter than the string as it is (length
           -- encoding and bytes). Not `<>`: a record with a key-scoped opcode rdbscan counts in
           -- serialized_bytes (KEY_META, Redis Enterprise's) is longer, and reads as stored raw
           -- (an LZF string of 16 KiB or more that saved only 4-6 bytes can be up to 2 bytes
           -- longer than the raw form, and reads as raw too: its saving is negligible).
           value_bytes < rdb_len_size(length) + length AS lzf,
           value_bytes - 1 - rdb_len_size(length) AS lzf_rest
    FROM s
), p AS MATERIALIZED (
    -- MATERIALIZED: inlined, stored_bytes (a CASE over lzf_rest over value_bytes) would be
    -- pasted into each of sds_alloc's and jemalloc_size's uses of their argument below, an
    -- expression DuckDB takes 0.4 s to plan on a 4-key dump and evaluates twice as slowly
    SELECT dump_id, pattern, length, memory_bytes, lzf,
           CASE WHEN NOT lzf THEN length
                WHEN lzf_rest - 1 < 64 THEN lzf_rest - 1
                WHEN lzf_rest - 2 < 16384 THEN lzf_rest - 2
                WHEN lzf_rest - 5 < 4294967296 THEN lzf_rest - 5
                ELSE lzf_rest - 9 END AS stored_bytes
    FROM v
), c AS (
    -- counted: over compress_min_bytes, and not a value the server reads in place: a dense
    -- HyperLogLog (always 12,304 bytes, HLL_DENSE_SIZE in hyperloglog.c; PFADD/PFCOUNT) or a
    -- value LZF shrinks over 64 times (LZF's most is about 88): nearly one repeated byte, as
    -- in a sparse bitmap, which SETBIT/BITCOUNT/BITPOS need raw. The RDB holds no type for a
    -- bitmap: a denser one, or a repetitive text, is not told apart
    SELECT *, length > $compress_min_bytes
              AND length <> 12304 AND NOT (lzf AND length > 64 * stored_bytes) AS counted
    FROM p
), fam AS (
    SELECT dump_id, pattern,
           count(*) FILTER (WHERE counted) AS keys,
           sum(length) FILTER (WHERE counted) AS raw_bytes,
           sum(stored_bytes) FILTER (WHERE counted) AS stored_bytes,
           coalesce(sum(sds_alloc(length) - sds_alloc(stored_bytes)) FILTER (WHERE counted AND lzf), 0) AS savings_bytes
    FROM c
    GROUP BY dump_id, pattern
)
-- a dump's totals are over its families with counted strings (compressible lists those only)
SELECT dump_id, sum(keys) AS keys, sum(raw_bytes) AS raw_bytes, sum(stored_bytes) AS stored_bytes,
       sum(savings_bytes) AS savings_bytes,
       arg_min(pattern, {'savings': -savings_bytes, 'raw': -raw_bytes, 'pattern': pattern}) AS pattern
FROM fam
WHERE keys > 0
GROUP BY dump_id
ORDER BY dump_id
