-- name: naming_families
-- answers: Which key families break which naming rules: per family and rule, keys, memory and an
--          example key.
-- params:
--   top (20)   rows returned, most keys first; 0 = all
SELECT pattern, rule, count(*) AS keys, sum(memory_bytes) AS memory_bytes,
       arg_min(key, key) AS example
FROM rnaming
GROUP BY pattern, rule
QUALIFY $top = 0 OR row_number() OVER (ORDER BY count(*) DESC, sum(memory_bytes) DESC, pattern, rule) <= $top
ORDER BY keys DESC, memory_bytes DESC, pattern, rule
