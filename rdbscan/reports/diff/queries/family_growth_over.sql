-- name: family_growth_over
-- answers: (`--fail-on family-growth`) How many families grew past the threshold, and the first
--          ten of them in the order of `families` (most memory gained or lost first). In SQL, not
--          over every row of `families` in Python: a keyspace can hold a family per key, and a
--          million rows took 2.7 GB there.
-- params:
--   threshold (0.0)   bytes gained, or percent of the old memory when pct
--   pct (False)       a percentage: families that existed before (with memory) only
WITH over AS (
    SELECT pattern, new_memory_bytes - old_memory_bytes AS delta_memory_bytes, new_keys - old_keys AS delta_keys
    FROM dfamily_sides
    WHERE CASE WHEN $pct THEN old_keys > 0 AND old_memory_bytes > 0
                              AND (new_memory_bytes - old_memory_bytes) * 100 > $threshold * old_memory_bytes
               ELSE new_memory_bytes - old_memory_bytes > $threshold END
), first AS (
    SELECT pattern, delta_memory_bytes, delta_keys
    FROM over
    ORDER BY abs(delta_memory_bytes) DESC, abs(delta_keys) DESC, pattern
    LIMIT 10
)
SELECT (SELECT count(*) FROM over) AS families,
       coalesce((SELECT list(pattern ORDER BY abs(delta_memory_bytes) DESC, abs(delta_keys) DESC, pattern)
                 FROM first), []) AS first
