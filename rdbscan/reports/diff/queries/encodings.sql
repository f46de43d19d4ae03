-- name: encodings
-- answers: Which collections changed encoding (listpack -> hashtable, intset -> hashtable,
--          listpack -> skiplist, listpack -> quicklist, and back), and which threshold each one
--          crossed: the setting, its value and what the key measures now (elements, or the
--          largest element in bytes); a set that took a member that is not an integer leaves its
--          intset whatever the thresholds. Strings are left out (their int/embstr/raw encoding
--          is inferred from the value, not stored in the dump). Thresholds: the new snapshot's
--          server defaults unless --config/--set say otherwise.
-- params:
--   from _rlimits.sql: hash_max_listpack_entries, hash_max_listpack_value
--   from _rlimits.sql: zset_max_listpack_entries, zset_max_listpack_value
--   from _rlimits.sql: set_max_intset_entries, set_max_listpack_entries, set_max_listpack_value
--   top (20)                          keys listed, largest new memory first
-- columns: db, key, pattern, type, old_encoding, new_encoding, direction (to-large | to-compact),
--   threshold (setting name, 'non-integer member', 'list-max-listpack-size', or NULL),
--   threshold_value, measured, old_/new_ length, max_elem_bytes and memory_bytes, then before the
--   top cut: total, conversions (a list of {type, old_encoding, new_encoding, threshold, keys})
WITH conv AS (
    SELECT db, key, pattern, new_type AS type, old_encoding, new_encoding,
           CASE WHEN old_encoding IN ('listpack', 'ziplist', 'zipmap', 'intset') THEN 'to-large'
                WHEN new_encoding IN ('listpack', 'ziplist', 'zipmap', 'intset') THEN 'to-compact'
                ELSE 'other' END AS direction,
           old_length, new_length, old_max_elem_bytes, new_max_elem_bytes, old_memory_bytes, new_memory_bytes,
           new_int_members
    FROM dchanges
    WHERE change = 'changed' AND old_type = new_type AND old_type <> 'string'
      AND old_encoding IS DISTINCT FROM new_encoding
), crossed AS (
    SELECT *,
           CASE
             WHEN direction <> 'to-large' THEN NULL
             WHEN type = 'hash' AND new_length > $hash_max_listpack_entries THEN 'hash-max-listpack-entries'
             WHEN type = 'hash' AND new_max_elem_bytes > $hash_max_listpack_value THEN 'hash-max-listpack-value'
             WHEN type = 'zset' AND new_length > $zset_max_listpack_entries THEN 'zset-max-listpack-entries'
             WHEN type = 'zset' AND new_max_elem_bytes > $zset_max_listpack_value THEN 'zset-max-listpack-value'
             WHEN type = 'set' AND old_encoding = 'intset' AND new_int_members < new_length THEN 'non-integer member'
             WHEN type = 'set' AND old_encoding = 'intset' AND new_length > $set_max_intset_entries THEN 'set-max-intset-entries'
             WHEN type = 'set' AND new_length > $set_max_listpack_entries THEN 'set-max-listpack-entries'
             WHEN type = 'set' AND new_max_elem_bytes > $set_max_listpack_value THEN 'set-max-listpack-value'
             WHEN type = 'list' THEN 'list-max-listpack-size'
           END AS threshold
    FROM conv
), measured AS (
    SELECT *,
           CASE threshold
             WHEN 'hash-max-listpack-entries' THEN $hash_max_listpack_entries
             WHEN 'hash-max-listpack-value' THEN $hash_max_listpack_value
             WHEN 'zset-max-listpack-entries' THEN $zset_max_listpack_entries
             WHEN 'zset-max-listpack-value' THEN $zset_max_listpack_value
             WHEN 'set-max-intset-entries' THEN $set_max_intset_entries
             WHEN 'set-max-listpack-entries' THEN $set_max_listpack_entries
             WHEN 'set-max-listpack-value' THEN $set_max_listpack_value
           END AS threshold_value,
           CASE WHEN threshold LIKE '%-value' THEN new_max_elem_bytes
                WHEN threshold LIKE '%-entries' THEN new_length END AS measured
    FROM crossed
), summary AS (
    SELECT list({'type': type, 'old_encoding': old_encoding, 'new_encoding': new_encoding,
                 'threshold': threshold, 'keys': keys}
                ORDER BY keys DESC, type, old_encoding, new_encoding, threshold) AS conversions,
           sum(keys)::BIGINT AS total
    FROM (SELECT type, old_encoding, new_encoding, threshold, count(*) AS keys FROM measured GROUP BY ALL)
)
SELECT m.db, m.key, m.pattern, m.type, m.old_encoding, m.new_encoding, m.direction, m.threshold,
       m.threshold_value, m.measured, m.old_length, m.new_length, m.old_max_elem_bytes, m.new_max_elem_bytes,
       m.old_memory_bytes, m.new_memory_bytes, s.total, s.conversions
FROM measured AS m CROSS JOIN summary AS s
ORDER BY m.new_memory_bytes DESC, m.db, m.key
LIMIT $top
