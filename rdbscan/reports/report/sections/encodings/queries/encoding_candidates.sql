-- name: encoding_candidates
-- answers: Which keys sit in a non-compact encoding (hashtable, skiplist, linkedlist, quicklist)
--          although they fit the compact thresholds (listpack / ziplist), and how much memory a
--          compact encoding would save. Such keys stay large because Redis never converts back
--          (they shrank after growing); a rewrite (DUMP/RESTORE, copy + RENAME) compacts them.
--          Savings use listpack_bytes_estimate and compact_memory_estimate (approximations).
-- params:
--   from _rlimits.sql: *
--   top (20)                          rows returned, largest saving first; 0 = all
SELECT dump_id, db, key, type, encoding, target_encoding, length, max_elem_bytes, memory_bytes,
       estimated_bytes, greatest(memory_bytes - estimated_bytes, 0) AS savings_bytes
FROM (
    -- the top N by saving (before the clamp at 0) with ORDER BY ... LIMIT: a heap, not a sort
    SELECT * FROM rcandidates
    ORDER BY memory_bytes - estimated_bytes DESC, key, dump_id, db
    LIMIT (CASE WHEN $top = 0 THEN 9223372036854775807 ELSE greatest($top, 0) END)
)
ORDER BY savings_bytes DESC, key, dump_id, db
