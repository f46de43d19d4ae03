-- name: _dfamilies
-- answers: (base relation, not a diff part) one row per side and key family (`pattern`) of
--          `dkeys`: keys, memory, keys with a TTL and the median TTL, so that the family parts
--          compute key_family once per key.
-- params: none
-- columns: side, pattern, keys, memory_bytes, keys_with_ttl, median_ttl_ms (over keys whose TTL is
--   still to run at the side's snapshot time)
CREATE OR REPLACE TEMP TABLE dfamilies AS
SELECT side, pattern,
       count(*) AS keys,
       sum(memory_bytes) AS memory_bytes,
       count(expire_at_ms) AS keys_with_ttl,
       median(ttl_ms) FILTER (WHERE ttl_ms > 0) AS median_ttl_ms
FROM dkeys
GROUP BY side, pattern
