-- name: patterns
-- answers: Which key families (names with id-like segments replaced by {id}/{date}/{ip}/{email}, see
--          key_pattern) hold the memory: keys, memory, share of total, types, average and largest
--          key, TTL coverage. Families beyond the top N fold into one `(other)` row.
-- params:
--   top (20)   families listed before the rest folds into (other); 0 = all
WITH listed AS (
    -- the top N families by memory (all when top = 0); rfamilies holds one row per family
    SELECT pattern, 1::BIGINT AS families, keys, memory_bytes, keys_with_ttl, types,
           largest_memory_bytes, largest_key
    FROM rfamilies
    ORDER BY memory_bytes DESC, keys DESC, pattern
    LIMIT (CASE WHEN $top = 0 THEN 9223372036854775807 ELSE greatest($top, 0) END)
), rest AS NOT MATERIALIZED (
    SELECT * FROM rfamilies WHERE pattern NOT IN (SELECT pattern FROM listed)
), other AS (
    -- the other families folded into one row, when there are any (types: their distinct types,
    -- gathered without concatenating one list per family)
    SELECT '(other)' AS pattern,
           count(*) AS families,
           sum(keys) AS keys,
           sum(memory_bytes) AS memory_bytes,
           sum(keys_with_ttl) AS keys_with_ttl,
           (SELECT list(t ORDER BY t) FROM (SELECT DISTINCT unnest(types) AS t FROM rest)) AS types,
           max(largest_memory_bytes) AS largest_memory_bytes,
           arg_min(largest_key, (-largest_memory_bytes, largest_key)) AS largest_key
    FROM rest
    HAVING count(*) > 0
), folded AS (
    SELECT *, row_number() OVER (ORDER BY memory_bytes DESC, keys DESC, pattern) AS rn FROM listed
    UNION ALL BY NAME
    SELECT * FROM other
)
SELECT pattern, families, keys, memory_bytes,
       memory_bytes / nullif(sum(memory_bytes) OVER (), 0) AS memory_share,
       keys / sum(keys) OVER () AS key_share,
       keys_with_ttl / keys AS ttl_share,
       types,
       round(memory_bytes / keys) AS avg_memory_bytes,
       largest_key, largest_memory_bytes
FROM folded
ORDER BY pattern = '(other)', rn
