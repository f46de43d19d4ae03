-- name: encoding_whatif
-- answers: What if a compact-encoding threshold were raised (x2, x4 entries; x2, x4 element bytes;
--          both x2)? How many non-compact hashes, sorted sets and sets would convert and how much
--          memory they would save. Larger listpacks cost CPU (O(n) lookups): raise with care.
-- params:
--   from _rlimits.sql: hash_max_listpack_entries, hash_max_listpack_value
--   from _rlimits.sql: zset_max_listpack_entries, zset_max_listpack_value
--   from _rlimits.sql: set_max_listpack_entries, set_max_listpack_value
--   from _rlimits.sql: list_max_listpack_size, list_max_ziplist_entries, list_max_ziplist_value
--   from _rlimits.sql: list_compact_encoding, compact_encoding
WITH limits AS (SELECT * FROM rlimits WHERE target_encoding <> 'intset'),  -- intsets: see encoding_candidates
scenarios(entries_factor, value_factor) AS (VALUES (1, 1), (2, 1), (4, 1), (1, 2), (1, 4), (2, 2)),
keyset AS (
    SELECT k.type, k.length, k.max_elem_bytes, k.memory_bytes,
           compact_memory_estimate(k.key_length,
               listpack_bytes_estimate(k.type, k.length, k.max_elem_bytes, k.value_serialized_bytes)) AS estimated_bytes,
           l.entries_setting, l.max_entries, l.value_setting, l.max_value
    FROM rkeys AS k
    JOIN limits AS l ON k.dump_id = l.dump_id AND k.type = l.type AND k.encoding = l.from_encoding
    -- rdb_type 0: a string (see _rcandidates.sql), tested on the stored byte before the names
    WHERE k.rdb_type <> 0 AND l.max_entries > 0 AND l.max_lp_bytes IS NULL AND k.type IN ('hash', 'zset', 'set')
      AND (coalesce(k.fields_with_ttl, 0) = 0 OR l.hash_field_ttl_encoding IS NOT NULL)
), per AS (
    -- per set of thresholds: dumps of different servers may hold different ones
    SELECT k.type, k.max_entries, k.max_value, s.entries_factor, s.value_factor,
           count(*) AS keys, sum(greatest(k.memory_bytes - k.estimated_bytes, 0)) AS savings_bytes
    FROM keyset AS k CROSS JOIN scenarios AS s
    WHERE k.length <= k.max_entries * s.entries_factor AND k.max_elem_bytes <= k.max_value * s.value_factor
    GROUP BY k.type, k.max_entries, k.max_value, s.entries_factor, s.value_factor
), lim AS (
    SELECT DISTINCT type, entries_setting, max_entries, value_setting, max_value FROM limits
    WHERE max_entries > 0 AND max_lp_bytes IS NULL AND type IN ('hash', 'zset', 'set')
)
SELECT l.type,
       CASE WHEN s.entries_factor = 1 AND s.value_factor = 1 THEN 'current thresholds'
            ELSE concat_ws(', ',
                CASE WHEN s.entries_factor > 1 THEN l.entries_setting || ' ' || l.max_entries || ' -> ' || l.max_entries * s.entries_factor END,
                CASE WHEN s.value_factor > 1 THEN l.value_setting || ' ' || l.max_value || ' -> ' || l.max_value * s.value_factor END) END AS change,
       l.max_entries * s.entries_factor AS entries, l.max_value * s.value_factor AS value,
       coalesce(p.keys, 0) AS keys, coalesce(p.savings_bytes, 0) AS savings_bytes
FROM lim AS l CROSS JOIN scenarios AS s
LEFT JOIN per AS p ON p.type = l.type AND p.max_entries = l.max_entries AND p.max_value = l.max_value
                   AND p.entries_factor = s.entries_factor AND p.value_factor = s.value_factor
ORDER BY l.type, l.max_entries, l.max_value, s.entries_factor * s.value_factor, s.entries_factor DESC
