-- name: naming_families
-- answers: Which key families break which naming rules: per family and rule, keys, memory and an
--          example key.
-- params:
--   top (20)   rows returned, most keys first; 0 = all
SELECT pattern, rule, count(*) AS keys, sum(memory_bytes) AS memory_bytes,
       arg_min(key, key) AS example
FROM rnaming
GROUP BY pattern, rule
ORDER BY keys DESC, memory_bytes DESC, pattern, rule
-- top N with ORDER BY ... LIMIT (a heap), not a row_number() window (a sort of every group)
LIMIT (CASE WHEN $top = 0 THEN 9223372036854775807 ELSE greatest($top, 0) END)
