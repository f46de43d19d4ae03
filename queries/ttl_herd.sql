-- name: ttl_herd
-- answers: Are expiries bunched (thundering herd)? The seconds and minutes in which the most keys
--          expire after the snapshot, with the families involved.
-- params:
--   top (10)           moments per granularity
--   min_keys (5)       a moment is listed only when at least this many keys expire in it
--   delimiters (':')   characters that separate key segments (for the families)
-- e and g are read more than once: NOT MATERIALIZED, to scan again rather than hold the keys
WITH e AS NOT MATERIALIZED (
    SELECT key, family, expire_at_ms, memory_bytes FROM rkeys WHERE expire_at_ms IS NOT NULL AND ttl_ms > 0
), g AS NOT MATERIALIZED (
    SELECT 'second' AS granularity, expire_at_ms // 1000 * 1000 AS moment_ms, key, family, memory_bytes FROM e
    UNION ALL
    SELECT 'minute', expire_at_ms // 60000 * 60000, key, family, memory_bytes FROM e
), moments AS (
    SELECT granularity, moment_ms, count(*) AS keys, sum(memory_bytes) AS memory_bytes
    FROM g GROUP BY ALL
), cut AS (
    -- per granularity: the average moment with any expiry, and the sort key (keys DESC,
    -- moment_ms) of the N-th moment (min(x, n): the n smallest values), so that the top N are
    -- picked without sorting every moment
    SELECT granularity, avg(keys) AS avg_keys,
           min({'k': -keys, 'm': moment_ms}, greatest($top, 1))[-1] AS top_cut
    FROM moments GROUP BY granularity
), listed AS (
    SELECT m.granularity, m.moment_ms, m.keys, m.memory_bytes,
           m.keys / (SELECT count(*) FROM e) AS share_of_expiring,
           -- how many times the average moment (of that granularity) with any expiry
           m.keys / c.avg_keys AS ratio_to_average
    FROM moments AS m JOIN cut AS c USING (granularity)
    WHERE m.keys >= $min_keys AND $top > 0 AND {'k': -m.keys, 'm': m.moment_ms} <= c.top_cut
), per_family AS (
    -- the families of the listed moments only (key_pattern is the costly part)
    SELECT g.granularity, g.moment_ms, key_family(g.key, g.family, delimiters := $delimiters) AS pattern,
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
