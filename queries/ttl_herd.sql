-- name: ttl_herd
-- answers: Are expiries bunched (thundering herd)? The seconds and minutes in which the most keys
--          expire after the snapshot, with the families involved.
-- params:
--   top (10)       moments per granularity
--   min_keys (5)   a moment is listed only when at least this many keys expire in it
WITH e AS (
    SELECT expire_at_ms, pattern, memory_bytes FROM rkeys WHERE ttl_ms > 0
), g AS (
    SELECT 'second' AS granularity, expire_at_ms // 1000 * 1000 AS moment_ms, pattern, memory_bytes FROM e
    UNION ALL
    SELECT 'minute', expire_at_ms // 60000 * 60000, pattern, memory_bytes FROM e
), per_family AS (
    SELECT granularity, moment_ms, pattern, count(*) AS keys, sum(memory_bytes) AS memory_bytes
    FROM g GROUP BY ALL
), moments AS (
    SELECT granularity, moment_ms,
           sum(keys) AS keys,
           sum(memory_bytes) AS memory_bytes,
           max_by(pattern || ' (' || keys || ')', keys, 3) AS families
    FROM per_family GROUP BY ALL
)
SELECT granularity, moment_ms, make_timestamp(moment_ms * 1000) AS moment, keys, memory_bytes,
       keys / (SELECT count(*) FROM e) AS share_of_expiring,
       -- how many times the average moment (of that granularity) with any expiry
       keys / avg(keys) OVER (PARTITION BY granularity) AS ratio_to_average,
       families
FROM moments
QUALIFY keys >= $min_keys
    AND row_number() OVER (PARTITION BY granularity ORDER BY keys DESC, moment_ms) <= $top
ORDER BY granularity DESC, keys DESC, moment_ms
