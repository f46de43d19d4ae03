-- name: ttl_families
-- answers: Which key families hold keys without a TTL. Families with no TTL at all come first,
--          those whose names look like caches, sessions, tokens or locks (looks_ephemeral) first
--          among them, then by memory without TTL.
-- params:
--   top (20)   families returned; 0 = all
WITH fam AS (
    -- rfamilies: one row per family, aggregated over its keys
    SELECT pattern,
           keys,
           keys - keys_with_ttl AS keys_without_ttl,
           memory_without_ttl,
           memory_bytes,
           keys_with_ttl / keys AS ttl_share,
           median_ttl_ms,
           looks_ephemeral(pattern) AS looks_ephemeral,
           largest_key_without_ttl AS example
    FROM rfamilies
    WHERE keys > keys_with_ttl
)
SELECT pattern, keys, keys_without_ttl, memory_without_ttl, memory_bytes, ttl_share,
       keys_without_ttl = keys AS no_ttl_at_all, looks_ephemeral, median_ttl_ms, example
FROM fam
ORDER BY no_ttl_at_all DESC, looks_ephemeral DESC, memory_without_ttl DESC, pattern
-- top N with ORDER BY ... LIMIT (a heap), not a row_number() window (a sort of every family)
LIMIT (CASE WHEN $top = 0 THEN 9223372036854775807 ELSE greatest($top, 0) END)
