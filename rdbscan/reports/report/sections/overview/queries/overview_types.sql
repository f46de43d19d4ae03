-- name: overview_types
-- answers: How many keys and how much memory each type and encoding accounts for, and how many
--          of them (module values rdbscan cannot read) have only a lower bound for memory.
-- params: none
SELECT type, encoding,
       count(*) AS keys,
       sum(memory_bytes) AS memory_bytes,
       sum(memory_bytes) / nullif(sum(sum(memory_bytes)) OVER (), 0) AS memory_share,
       round(avg(memory_bytes)) AS avg_memory_bytes,
       count(*) FILTER (WHERE memory_is_lower_bound) AS memory_lower_bound_keys
FROM rkeys
GROUP BY type, encoding
ORDER BY memory_bytes DESC, keys DESC, type, encoding
