-- name: compressible
-- answers: Which families hold string values that compress, and how much memory compressing them in
--          the client would save. The RDB stores a string over 20 bytes LZF-compressed when that
--          saves at least 4 bytes (rdbcompression yes, the default), with both sizes; per family,
--          over its strings longer than compress_min_bytes: keys, their length (raw_bytes), the bytes the RDB
--          stores (stored_bytes: the LZF payload, or the string as it is when it did not compress),
--          keys stored compressed, the ratio raw / stored, memory, and about the memory that storing
--          them compressed would save (savings_bytes: the value's allocation at its length minus
--          at its LZF length, sds_alloc; a client compressor such as zstd usually does better than
--          LZF). Left out: values the server reads in place (a dense HyperLogLog, a sparse bitmap:
--          a value LZF shrinks over 64 times). Families with the most to save first; every row also carries the totals, and
--          `lzf_strings`, the strings of the dump stored compressed (0: saved with rdbcompression no,
--          nothing measured).
-- by dump: Per dump, what its report alone says of its string values that compress: the
--          families it lists (its `top`, the most to save first) with its totals, over that
--          dump's keys; for a report over many dumps (values/build.py by_dump).
-- params:
--   compress_min_bytes (1024) strings longer than this many bytes are counted
--   top (20)           families listed (by dump: per dump)
--
-- A string's stored size comes from its record's size in the file (keys.serialized_bytes) less
-- what precedes the value: the expiry (9 bytes; 5 in RDB versions before 6, which stored seconds),
-- the LRU idle time (1 + its length encoding), the LFU counter (2), the type byte and the key
-- (its length encoding and bytes). An LZF value is 0xC3, the compressed and the uncompressed
-- lengths (length encodings: 1, 2, 5 or 9 bytes) and the payload.
CREATE OR REPLACE TEMP MACRO rdb_len_size(n) AS
    CASE WHEN n < 64 THEN 1 WHEN n < 16384 THEN 2 WHEN n < 4294967296 THEN 5 ELSE 9 END;
WITH s AS (
    -- the strings the RDB may have stored LZF-compressed. Read twice (the LZF count over all of
    -- them, the families over those counted): NOT MATERIALIZED, which reads the keys twice, takes
    -- 0.006 s more to plan on a small dump (a report alone per dump up to 32 dumps)
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
), lzf AS (
    -- every string stored LZF-compressed (0: saved with rdbcompression no, nothing measured)
    SELECT /*by dump: dump_id,*/ count(*) FILTER (WHERE lzf) AS lzf_strings
    FROM v
    /*by dump: GROUP BY dump_id*/
), p AS MATERIALIZED (
    -- the strings over compress_min_bytes (few) with their stored bytes. MATERIALIZED:
    -- inlined, stored_bytes (a CASE over lzf_rest over value_bytes) would be pasted into each
    -- of sds_alloc's and jemalloc_size's uses of their argument below, an expression DuckDB
    -- takes 0.4 s to plan on a 4-key dump and evaluates twice as slowly
    SELECT /*by dump: dump_id,*/ pattern, length, memory_bytes, lzf,
           CASE WHEN NOT lzf THEN length
                WHEN lzf_rest - 1 < 64 THEN lzf_rest - 1
                WHEN lzf_rest - 2 < 16384 THEN lzf_rest - 2
                WHEN lzf_rest - 5 < 4294967296 THEN lzf_rest - 5
                ELSE lzf_rest - 9 END AS stored_bytes
    FROM v
    WHERE length > $compress_min_bytes
), c AS (
    -- counted: not a value the server reads in place: a dense HyperLogLog (always 12,304
    -- bytes, HLL_DENSE_SIZE in hyperloglog.c; PFADD/PFCOUNT) or a value LZF shrinks over 64
    -- times (LZF's most is about 88): nearly one repeated byte, as in a sparse bitmap, which
    -- SETBIT/BITCOUNT/BITPOS need raw. The RDB holds no type for a bitmap: a denser one, or a
    -- repetitive text, is not told apart
    SELECT *, length <> 12304 AND NOT (lzf AND length > 64 * stored_bytes) AS counted
    FROM p
), fam AS (
    SELECT /*by dump: dump_id,*/ pattern,
           count(*) FILTER (WHERE counted) AS keys,
           sum(length) FILTER (WHERE counted) AS raw_bytes,
           sum(stored_bytes) FILTER (WHERE counted) AS stored_bytes,
           count(*) FILTER (WHERE counted AND lzf) AS lzf_keys,
           sum(memory_bytes) FILTER (WHERE counted) AS memory_bytes,
           sum(sds_alloc(length) - sds_alloc(stored_bytes)) FILTER (WHERE counted AND lzf) AS savings_bytes
    FROM c
    GROUP BY /*by dump: dump_id,*/ pattern
), listed AS (
    -- the families with counted strings, each with the totals over them (window functions)
    -- and lzf_strings
    SELECT /*by dump: f.dump_id,*/ pattern, keys, raw_bytes, stored_bytes, lzf_keys,
           round(raw_bytes / stored_bytes, 2) AS ratio,
           memory_bytes, coalesce(savings_bytes, 0) AS savings_bytes,
           sum(keys) OVER w AS total_keys,
           sum(raw_bytes) OVER w AS total_raw_bytes,
           sum(stored_bytes) OVER w AS total_stored_bytes,
           sum(coalesce(savings_bytes, 0)) OVER w AS total_savings_bytes,
           l.lzf_strings
    FROM fam AS f
    JOIN lzf AS l ON true /*by dump: AND l.dump_id = f.dump_id*/
    WHERE keys > 0
    WINDOW w AS (/*by dump: PARTITION BY f.dump_id*/)
)
SELECT *
FROM listed
QUALIFY row_number() OVER (/*by dump: PARTITION BY dump_id*/ ORDER BY savings_bytes DESC, raw_bytes DESC, pattern) <= $top
ORDER BY /*by dump: dump_id,*/ savings_bytes DESC, raw_bytes DESC, pattern
