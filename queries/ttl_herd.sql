-- name: ttl_herd
-- answers: Are expiries bunched (thundering herd)? The seconds and minutes in which the most keys
--          expire after the snapshot, with the families involved.
-- params:
--   top (10)           moments per granularity
--   min_keys (5)       a moment is listed only when at least this many keys expire in it
--   delimiters (':')   characters that separate key segments (for the families)
WITH e AS (
    SELECT key, expire_at_ms, memory_bytes FROM rkeys WHERE ttl_ms > 0
), g AS (
    SELECT 'second' AS granularity, expire_at_ms // 1000 * 1000 AS moment_ms, key, memory_bytes FROM e
    UNION ALL
    SELECT 'minute', expire_at_ms // 60000 * 60000, key, memory_bytes FROM e
), moments AS (
    SELECT granularity, moment_ms, count(*) AS keys, sum(memory_bytes) AS memory_bytes
    FROM g GROUP BY ALL
), listed AS (
    SELECT granularity, moment_ms, keys, memory_bytes,
           keys / (SELECT count(*) FROM e) AS share_of_expiring,
           -- how many times the average moment (of that granularity) with any expiry
           keys / avg(keys) OVER (PARTITION BY granularity) AS ratio_to_average
    FROM moments
    QUALIFY keys >= $min_keys
        AND row_number() OVER (PARTITION BY granularity ORDER BY keys DESC, moment_ms) <= $top
), per_family AS (
    -- the families of the listed moments only (key_pattern is the costly part)
    SELECT g.granularity, g.moment_ms, key_pattern(g.key, delimiters := $delimiters) AS pattern,
           count(*) AS keys
    FROM g JOIN listed AS l ON l.granularity = g.granularity AND l.moment_ms = g.moment_ms
    GROUP BY ALL
), families AS (
    SELECT granularity, moment_ms, max_by(pattern || ' (' || keys || ')', keys, 3) AS families
    FROM per_family GROUP BY ALL
)
SELECT l.granularity, l.moment_ms, make_timestamp(l.moment_ms * 1000) AS moment, l.keys, l.memory_bytes,
       l.share_of_expiring, l.ratio_to_average, f.families
FROM listed AS l
JOIN families AS f ON f.granularity = l.granularity AND f.moment_ms = l.moment_ms
ORDER BY l.granularity DESC, l.keys DESC, l.moment_ms
