-- name: _rfamilies
-- answers: (base relation, not a report) one row per key family (`pattern`) of `rkeys`, with the
--          per-family aggregates that patterns, prefixes and ttl_families read. key_pattern is the
--          costly part of those queries: computed here, once per key, into a TEMP TABLE as small
--          as the number of families, instead of once per query. Created when a query mentions
--          `rfamilies`.
-- params: none
-- columns: pattern, keys, memory_bytes, keys_with_ttl, types (distinct, sorted), largest_key and
--   largest_memory_bytes (the key with the most memory_bytes, the first in byte order on a tie), memory_without_ttl and
--   largest_key_without_ttl (the same over the keys without TTL), median_ttl_ms (over keys whose
--   TTL is still to run at snapshot time).
CREATE OR REPLACE TEMP TABLE rfamilies AS
WITH by_type AS (
    -- per family, type and TTL or not first (a family's distinct types are its rows here;
    -- DuckDB plans list(DISTINCT type) (and histogram) as a second grouping over a copy of
    -- every key), so that each aggregate runs once per key
    SELECT pattern, type, expire_at_ms IS NULL AS no_ttl,
           count(*) AS keys,
           sum(memory_bytes) AS memory_bytes,
           max(memory_bytes) AS largest_memory_bytes,
           arg_min(key, (-memory_bytes, key)) AS largest_key
    FROM rkeys
    GROUP BY pattern, type, no_ttl
), ttl_medians AS (
    -- median() itself, not a list() of every TTL of the family then list_aggregate: DuckDB
    -- cannot spill those lists, and under the report's memory limit (connections.py) they ran
    -- out of memory over a million keys with TTLs
    SELECT pattern, median(ttl_ms) AS median_ttl_ms
    FROM rkeys
    WHERE ttl_ms > 0
    GROUP BY pattern
), families AS (
    SELECT pattern,
           sum(keys)::BIGINT AS keys,
           sum(memory_bytes) AS memory_bytes,
           coalesce(sum(keys) FILTER (WHERE NOT no_ttl), 0)::BIGINT AS keys_with_ttl,
           list_sort(list(DISTINCT type)) AS types,
           max(largest_memory_bytes) AS largest_memory_bytes,
           arg_min(largest_key, (-largest_memory_bytes, largest_key)) AS largest_key,
           sum(memory_bytes) FILTER (WHERE no_ttl) AS memory_without_ttl,
           arg_min(largest_key, (-largest_memory_bytes, largest_key)) FILTER (WHERE no_ttl) AS largest_key_without_ttl
    FROM by_type
    GROUP BY pattern
)
SELECT f.*, m.median_ttl_ms
FROM families AS f LEFT JOIN ttl_medians AS m USING (pattern)
