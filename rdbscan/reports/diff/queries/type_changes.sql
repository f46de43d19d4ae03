-- name: type_changes
-- answers: Which keys kept their name but changed type (deleted and written again as another
--          type): the keys, and how many per (old type, new type).
-- params:
--   top (20)   keys listed, largest new memory first
-- columns: db, key, pattern, old_type, new_type, old_memory_bytes, new_memory_bytes, then before the
--   top cut: total (every type change), pairs (a list of {old_type, new_type, keys})
WITH t AS (
    SELECT db, key, pattern, old_type, new_type, old_memory_bytes, new_memory_bytes
    FROM dchanges
    WHERE change = 'changed' AND old_type <> new_type
), pairs AS (
    SELECT list({'old_type': old_type, 'new_type': new_type, 'keys': keys}
                ORDER BY keys DESC, old_type, new_type) AS pairs,
           sum(keys)::BIGINT AS total
    FROM (SELECT old_type, new_type, count(*) AS keys FROM t GROUP BY ALL)
)
SELECT t.*, pairs.total, pairs.pairs
FROM t CROSS JOIN pairs
ORDER BY t.new_memory_bytes DESC, t.db, t.key
LIMIT $top
