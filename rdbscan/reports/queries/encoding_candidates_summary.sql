-- name: encoding_candidates_summary
-- answers: Per type: how many keys are non-compact although they fit the compact thresholds, and
--          the total estimated saving (see encoding_candidates).
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
SELECT type, count(*) AS keys, sum(memory_bytes) AS memory_bytes,
       sum(greatest(memory_bytes - estimated_bytes, 0)) AS savings_bytes
FROM rcandidates
GROUP BY type
ORDER BY savings_bytes DESC, type
