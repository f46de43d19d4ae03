-- name: encoding_candidates
-- answers: Which keys sit in a non-compact encoding (hashtable, skiplist, linkedlist, quicklist)
--          although they fit the compact thresholds (listpack / ziplist), and how much memory a
--          compact encoding would save. Such keys stay large because Redis never converts back
--          (they shrank after growing); a rewrite (DUMP/RESTORE, copy + RENAME) compacts them.
--          Savings use listpack_bytes_estimate and compact_memory_estimate (approximations).
-- params:
--   hash_max_listpack_entries (512)   hash-max-listpack-entries (hash-max-ziplist-entries)
--   hash_max_listpack_value (64)      hash-max-listpack-value (hash-max-ziplist-value)
--   zset_max_listpack_entries (128)   zset-max-listpack-entries (zset-max-ziplist-entries)
--   zset_max_listpack_value (64)      zset-max-listpack-value (zset-max-ziplist-value)
--   set_max_listpack_entries (128)    set-max-listpack-entries; 0 = the server has no listpack sets (before 7.2)
--   set_max_listpack_value (64)       set-max-listpack-value
--   list_max_ziplist_entries (512)    list-max-ziplist-entries (servers up to 3.0, linkedlist -> ziplist)
--   list_max_ziplist_value (64)       list-max-ziplist-value (servers up to 3.0)
--   list_max_listpack_size (-2)       list-max-listpack-size (7.2+: a small quicklist converts back to listpack)
--   list_compact_encoding ('listpack')  compact list encoding of the server: ziplist (<= 3.0), none (3.2-7.0), listpack (7.2+)
--   compact_encoding ('listpack')     compact hash/zset encoding name: ziplist (<= 6.2) or listpack (7.0+)
--   set_max_intset_entries (512)      set-max-intset-entries (a set of integers only; no element-size limit)
--   top (20)                          rows returned, largest saving first; 0 = all
SELECT dump_id, db, key, type, encoding, target_encoding, length, max_elem_bytes, memory_bytes,
       estimated_bytes, greatest(memory_bytes - estimated_bytes, 0) AS savings_bytes
FROM (
    -- the top N by saving (before the clamp at 0) with ORDER BY ... LIMIT: a heap, not a sort
    SELECT * FROM rcandidates
    ORDER BY memory_bytes - estimated_bytes DESC, key
    LIMIT (CASE WHEN $top = 0 THEN 9223372036854775807 ELSE greatest($top, 0) END)
)
ORDER BY savings_bytes DESC, key
