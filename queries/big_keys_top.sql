-- name: big_keys_top
-- answers: The largest keys of each type, ranked by memory and separately by length (element
--          count; bytes for strings).
-- params:
--   top (10)   keys per type and ranking
WITH k AS NOT MATERIALIZED (
    -- each ranking's sort key as a struct (compared field by field), ascending = best first:
    -- memory: memory_bytes DESC, length DESC (NULLs last), key; length: length DESC NULLS LAST,
    -- memory_bytes DESC, key (lengths and memory are never negative)
    SELECT dump_id, db, key, type, encoding, length, memory_bytes, expire_at_ms,
           {'m': -memory_bytes, 'l': coalesce(-length, 9223372036854775807), 'k': key} AS by_memory,
           {'l': coalesce(-length, 9223372036854775807), 'm': -memory_bytes, 'k': key} AS by_length
    FROM rkeys
), cut AS (
    -- per type, the sort key of the N-th key of each ranking (min(x, n): the n smallest values).
    -- Only keys up to it (ties included) can be in the top N: ranking those alone gives the same
    -- ranks as ranking every key, without sorting the whole keyspace
    SELECT type,
           min(by_memory, greatest($top, 1))[-1] AS memory_cut,
           min(by_length, greatest($top, 1))[-1] AS length_cut
    FROM k
    GROUP BY type
), candidates AS (
    SELECT k.*, k.by_memory <= c.memory_cut AS in_memory, k.by_length <= c.length_cut AS in_length
    FROM k JOIN cut AS c USING (type)
    WHERE k.by_memory <= c.memory_cut OR k.by_length <= c.length_cut
)
SELECT ranking, type, rank, dump_id, db, key, encoding, length, memory_bytes,
       expire_at_ms IS NOT NULL AS has_ttl
FROM (
    SELECT 'memory' AS ranking, *,
           row_number() OVER (PARTITION BY type ORDER BY memory_bytes DESC, length DESC, key) AS rank
    FROM candidates WHERE in_memory
    UNION ALL BY NAME
    SELECT 'length' AS ranking, *,
           row_number() OVER (PARTITION BY type ORDER BY length DESC NULLS LAST, memory_bytes DESC, key) AS rank
    FROM candidates WHERE in_length
)
WHERE rank <= $top
ORDER BY ranking DESC, type, rank
