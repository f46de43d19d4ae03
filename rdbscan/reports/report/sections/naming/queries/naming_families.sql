-- name: naming_families
-- answers: Which key families break which naming rules: per family and rule, keys, memory and an
--          example key.
-- params:
--   top (20)   rows returned, most keys first; 0 = all
WITH listed AS (
    SELECT pattern, rule, count(*) AS keys, sum(memory_bytes) AS memory_bytes
    FROM rnaming
    GROUP BY pattern, rule
    ORDER BY keys DESC, memory_bytes DESC, pattern, rule
    -- top N with ORDER BY ... LIMIT (a heap), not a row_number() window (a sort of every group)
    LIMIT (CASE WHEN $top = 0 THEN 9223372036854775807 ELSE greatest($top, 0) END)
), examples AS (
    -- the example (the first key in byte order) of the listed groups only: a key name kept per
    -- group cost 2.4 of 2.5 CPU s over two million one-key families (`ratelimit:10.1.2.3`)
    SELECT pattern, rule, min(n.key) AS example
    FROM rnaming AS n JOIN listed USING (pattern, rule)
    GROUP BY pattern, rule
)
SELECT l.pattern, l.rule, l.keys, l.memory_bytes, e.example
FROM listed AS l JOIN examples AS e USING (pattern, rule)
ORDER BY l.keys DESC, l.memory_bytes DESC, l.pattern, l.rule
