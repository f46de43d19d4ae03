-- name: _dfamilies
-- answers: (base relation, not a diff part) one row per side and key family (`pattern`) of
--          `dkeys`: keys, memory, keys with a TTL and the median TTL, so that the family parts
--          compute key_family once per key.
-- params: none
-- columns: side, pattern, keys, memory_bytes, keys_with_ttl, median_ttl_ms (over keys whose TTL is
--   still to run at the side's snapshot time). Then `dfamily_sides`, one row per family with
--   both sides: old_/new_ keys and memory_bytes (0 on a side without the family),
--   keys_with_ttl and median_ttl_ms (NULL on such a side), which families, family_ttl and
--   family_growth_over read.
--
-- The median of one or two TTLs is their mean: median() only for the families of three or more,
-- from a second pass over their keys. A median per family is a state DuckDB cannot spill, and a
-- keyspace can hold a family per key (`ratelimit:10.1.2.3`): over a million such keys with TTLs
-- diff ran out of memory at 128 MB.
CREATE OR REPLACE TEMP TABLE dfamilies AS
WITH f AS (
    SELECT side, pattern,
           count(*) AS keys,
           sum(memory_bytes) AS memory_bytes,
           count(expire_at_ms) AS keys_with_ttl,
           count(*) FILTER (WHERE ttl_ms > 0) AS running,
           min(ttl_ms) FILTER (WHERE ttl_ms > 0) AS least_ttl_ms,
           max(ttl_ms) FILTER (WHERE ttl_ms > 0) AS most_ttl_ms
    FROM dkeys
    GROUP BY side, pattern
), m AS (
    SELECT side, pattern, median(ttl_ms) AS median_ttl_ms
    FROM dkeys SEMI JOIN (SELECT side, pattern FROM f WHERE running > 2) AS many USING (side, pattern)
    WHERE ttl_ms > 0
    GROUP BY side, pattern
)
SELECT f.side, f.pattern, f.keys, f.memory_bytes, f.keys_with_ttl,
       CASE WHEN f.running <= 2 THEN (f.least_ttl_ms + f.most_ttl_ms) / 2 ELSE m.median_ttl_ms END AS median_ttl_ms
FROM f LEFT JOIN m USING (side, pattern);

CREATE OR REPLACE TEMP TABLE dfamily_sides AS
SELECT pattern,
       coalesce(sum(keys) FILTER (WHERE side = 'old'), 0)::BIGINT AS old_keys,
       coalesce(sum(keys) FILTER (WHERE side = 'new'), 0)::BIGINT AS new_keys,
       coalesce(sum(memory_bytes) FILTER (WHERE side = 'old'), 0)::BIGINT AS old_memory_bytes,
       coalesce(sum(memory_bytes) FILTER (WHERE side = 'new'), 0)::BIGINT AS new_memory_bytes,
       max(keys_with_ttl) FILTER (WHERE side = 'old') AS old_keys_with_ttl,
       max(keys_with_ttl) FILTER (WHERE side = 'new') AS new_keys_with_ttl,
       max(median_ttl_ms) FILTER (WHERE side = 'old') AS old_median_ttl_ms,
       max(median_ttl_ms) FILTER (WHERE side = 'new') AS new_median_ttl_ms
FROM dfamilies
GROUP BY pattern
