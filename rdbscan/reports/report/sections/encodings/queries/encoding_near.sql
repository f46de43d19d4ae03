-- name: encoding_near
-- answers: Which non-compact hashes, sorted sets and sets miss the compact thresholds by a small
--          margin (entries or element size at most margin above the limit), what blocks them, and
--          what they would save if the threshold were raised to fit.
-- params:
--   from _rlimits.sql: hash_max_listpack_entries, hash_max_listpack_value
--   from _rlimits.sql: zset_max_listpack_entries, zset_max_listpack_value
--   from _rlimits.sql: set_max_listpack_entries, set_max_listpack_value
--   from _rlimits.sql: list_max_listpack_size, list_max_ziplist_entries, list_max_ziplist_value
--   from _rlimits.sql: list_compact_encoding, compact_encoding
--   margin (0.25)                     how far above a limit still counts as "just over" (0.25 = 25 %)
--   top (20)                          rows returned, largest saving first; 0 = all
WITH limits AS (SELECT * FROM rlimits WHERE target_encoding <> 'intset'),  -- intsets: see encoding_candidates
near AS (
    SELECT k.dump_id, k.db, k.key, k.type, k.encoding, l.target_encoding, k.length, k.max_elem_bytes,
           k.memory_bytes, l.entries_setting, l.max_entries, l.value_setting, l.max_value,
           k.length > l.max_entries AS over_entries,
           k.max_elem_bytes > l.max_value AS over_value,
           compact_memory_estimate(k.key_length,
               listpack_bytes_estimate(k.type, k.length, k.max_elem_bytes, k.value_serialized_bytes)) AS estimated_bytes
    FROM rkeys AS k
    JOIN limits AS l ON k.dump_id = l.dump_id AND k.type = l.type AND k.encoding = l.from_encoding
    -- rdb_type 0: a string (see _rcandidates.sql), tested on the stored byte before the names
    WHERE k.rdb_type <> 0 AND l.max_entries > 0 AND l.max_lp_bytes IS NULL
      AND (coalesce(k.fields_with_ttl, 0) = 0 OR l.hash_field_ttl_encoding IS NOT NULL)
      AND (k.length > l.max_entries OR k.max_elem_bytes > l.max_value)
      AND k.length <= l.max_entries * (1 + $margin)
      AND k.max_elem_bytes <= l.max_value * (1 + $margin)
)
SELECT dump_id, db, key, type, encoding, target_encoding, length, max_elem_bytes, memory_bytes,
       concat_ws(', ',
           CASE WHEN over_entries THEN entries_setting || ' ' || max_entries || ' < ' || length END,
           CASE WHEN over_value THEN value_setting || ' ' || max_value || ' < ' || max_elem_bytes END) AS blocked_by,
       estimated_bytes, greatest(memory_bytes - estimated_bytes, 0) AS savings_bytes
FROM (
    -- the top N by saving (before the clamp at 0) with ORDER BY ... LIMIT: a heap, not a sort
    SELECT * FROM near
    ORDER BY memory_bytes - estimated_bytes DESC, key, dump_id, db
    LIMIT (CASE WHEN $top = 0 THEN 9223372036854775807 ELSE greatest($top, 0) END)
)
ORDER BY savings_bytes DESC, key, dump_id, db
