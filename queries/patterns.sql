-- name: patterns
-- answers: Which key families (names with id-like segments replaced by {id}/{date}, see
--          key_pattern) hold the memory: keys, memory, share of total, types, average and largest
--          key, TTL coverage. Families beyond the top N fold into one `(other)` row.
-- params:
--   top (20)   families listed before the rest folds into (other); 0 = all
WITH ranked AS (
    -- rfamilies: one row per family (keys, memory_bytes, keys_with_ttl, types, largest key)
    SELECT pattern, keys, memory_bytes, keys_with_ttl, types, largest_memory_bytes, largest_key,
           row_number() OVER (ORDER BY memory_bytes DESC, keys DESC, pattern) AS rn
    FROM rfamilies
), folded AS (
    SELECT CASE WHEN $top = 0 OR rn <= $top THEN pattern ELSE '(other)' END AS pattern,
           count(*) AS families,
           sum(keys) AS keys,
           sum(memory_bytes) AS memory_bytes,
           sum(keys_with_ttl) AS keys_with_ttl,
           list_sort(list_distinct(flatten(list(types)))) AS types,
           max(largest_memory_bytes) AS largest_memory_bytes,
           arg_max(largest_key, largest_memory_bytes) AS largest_key,
           min(rn) AS rn
    FROM ranked
    GROUP BY 1
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
