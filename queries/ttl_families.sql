-- name: ttl_families
-- answers: Which key families hold keys without a TTL. Families with no TTL at all come first,
--          those whose names look like caches, sessions, tokens or locks (looks_ephemeral) first
--          among them, then by memory without TTL.
-- params:
--   top (20)   families returned; 0 = all
WITH fam AS (
    SELECT pattern,
           count(*) AS keys,
           count(*) - count(expire_at_ms) AS keys_without_ttl,
           sum(memory_bytes) FILTER (WHERE expire_at_ms IS NULL) AS memory_without_ttl,
           sum(memory_bytes) AS memory_bytes,
           count(expire_at_ms) / count(*) AS ttl_share,
           median(ttl_ms) FILTER (WHERE ttl_ms > 0) AS median_ttl_ms,
           looks_ephemeral(pattern) AS looks_ephemeral,
           arg_max(key, memory_bytes) FILTER (WHERE expire_at_ms IS NULL) AS example
    FROM rkeys
    GROUP BY pattern
    HAVING count(*) > count(expire_at_ms)
)
SELECT pattern, keys, keys_without_ttl, memory_without_ttl, memory_bytes, ttl_share,
       keys_without_ttl = keys AS no_ttl_at_all, looks_ephemeral, median_ttl_ms, example
FROM fam
QUALIFY $top = 0 OR row_number() OVER (
    ORDER BY keys_without_ttl = keys DESC, looks_ephemeral DESC, memory_without_ttl DESC, pattern) <= $top
ORDER BY no_ttl_at_all DESC, looks_ephemeral DESC, memory_without_ttl DESC, pattern
