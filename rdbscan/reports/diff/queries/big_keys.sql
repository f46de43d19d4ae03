-- name: big_keys
-- answers: Which keys became big (new big keys: added big, or grown over a big-key threshold),
--          which big keys grew past a critical threshold, and which big keys are gone (removed,
--          or shrunk under every threshold). Thresholds as in the report's big_keys.
-- params:
--   string_bytes (10240)                  string value above this many bytes (STRLEN) is big
--   string_critical_bytes (1048576)       string value above this many bytes is critical
--   collection_length (5000)              collection above this many elements is big
--   collection_critical_length (100000)   collection above this many elements is critical
--   collection_memory (52428800)          collection above this many bytes of memory is big
--   top (20)                              keys listed per kind, largest new (gone: old) memory first
-- columns: kind (new | past-critical | gone), db, key, pattern, change (added | removed | changed),
--   old_/new_ type, length, memory_bytes, old_severity and new_severity (critical | warning |
--   NULL: not big), then over every key before the top cut: total_new, total_past_critical, total_gone
WITH flagged AS (
    SELECT *,
           (old_type = 'string' AND old_length > $string_bytes)
           OR (old_type IN ('list', 'set', 'zset', 'hash', 'stream')
               AND (old_length > $collection_length OR old_memory_bytes > $collection_memory)) AS old_big,
           (old_type = 'string' AND old_length > $string_critical_bytes)
           OR (old_type IN ('list', 'set', 'zset', 'hash', 'stream') AND old_length > $collection_critical_length)
               AS old_critical,
           (new_type = 'string' AND new_length > $string_bytes)
           OR (new_type IN ('list', 'set', 'zset', 'hash', 'stream')
               AND (new_length > $collection_length OR new_memory_bytes > $collection_memory)) AS new_big,
           (new_type = 'string' AND new_length > $string_critical_bytes)
           OR (new_type IN ('list', 'set', 'zset', 'hash', 'stream') AND new_length > $collection_critical_length)
               AS new_critical
    FROM dchanges
), kinds AS (
    SELECT *,
           CASE WHEN coalesce(new_big, false) AND NOT coalesce(old_big, false) THEN 'new'
                WHEN coalesce(new_critical, false) AND NOT coalesce(old_critical, false) THEN 'past-critical'
                WHEN coalesce(old_big, false) AND NOT coalesce(new_big, false) THEN 'gone' END AS kind
    FROM flagged
), listed AS (
    SELECT kind, db, key, pattern, change, old_type, new_type, old_length, new_length,
           old_memory_bytes, new_memory_bytes,
           CASE WHEN old_critical THEN 'critical' WHEN old_big THEN 'warning' END AS old_severity,
           CASE WHEN new_critical THEN 'critical' WHEN new_big THEN 'warning' END AS new_severity,
           row_number() OVER (PARTITION BY kind
                              ORDER BY coalesce(new_memory_bytes, old_memory_bytes) DESC, db, key) AS rank,
           count(CASE WHEN kind = 'new' THEN 1 END) OVER () AS total_new,
           count(CASE WHEN kind = 'past-critical' THEN 1 END) OVER () AS total_past_critical,
           count(CASE WHEN kind = 'gone' THEN 1 END) OVER () AS total_gone
    FROM kinds
    WHERE kind IS NOT NULL
)
SELECT * EXCLUDE (rank)
FROM listed
WHERE rank <= $top
ORDER BY list_position(['new', 'past-critical', 'gone'], kind), rank
