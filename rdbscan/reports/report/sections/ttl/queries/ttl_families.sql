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
           keys_with_ttl,
           memory_without_ttl,
           memory_bytes,
           keys_with_ttl / keys AS ttl_share,
           keys_with_ttl = 0 AS no_ttl_at_all,
           looks_ephemeral(pattern) AS looks_ephemeral,
           largest_key, largest_key_has_ttl
    FROM rfamilies
    WHERE keys > keys_with_ttl
), listed AS (
    SELECT *
    FROM fam
    ORDER BY no_ttl_at_all DESC, looks_ephemeral DESC, memory_without_ttl DESC, pattern
    -- top N with ORDER BY ... LIMIT (a heap), not a row_number() window (a sort of every family)
    LIMIT (CASE WHEN $top = 0 THEN 9223372036854775807 ELSE greatest($top, 0) END)
), k AS (
    -- from the keys of the listed families that have keys with a TTL (rfamilies holds no median
    -- nor largest key without TTL: see _rfamilies.sql): the median TTL still to run at snapshot
    -- time, and the largest key without TTL (the first in byte order on a tie)
    SELECT pattern,
           median(ttl_ms) FILTER (WHERE ttl_ms > 0) AS median_ttl_ms,
           arg_min(key, (-memory_bytes, key)) FILTER (WHERE expire_at_ms IS NULL) AS largest_key_without_ttl
    FROM rkeys
    WHERE pattern IN (SELECT pattern FROM listed WHERE keys_with_ttl > 0)
    GROUP BY pattern
)
SELECT l.pattern, l.keys, l.keys_without_ttl, l.memory_without_ttl, l.memory_bytes, l.ttl_share,
       l.no_ttl_at_all, l.looks_ephemeral, k.median_ttl_ms,
       -- the family's largest key when it has no TTL: the largest of those without
       CASE WHEN l.largest_key_has_ttl THEN k.largest_key_without_ttl ELSE l.largest_key END AS example
FROM listed AS l LEFT JOIN k USING (pattern)
ORDER BY l.no_ttl_at_all DESC, l.looks_ephemeral DESC, l.memory_without_ttl DESC, l.pattern
