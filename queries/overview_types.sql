-- name: overview_types
-- answers: How many keys and how much memory each type and encoding accounts for.
-- params: none
SELECT type, encoding,
       count(*) AS keys,
       sum(memory_bytes) AS memory_bytes,
       sum(memory_bytes) / nullif(sum(sum(memory_bytes)) OVER (), 0) AS memory_share,
       round(avg(memory_bytes)) AS avg_memory_bytes
FROM rkeys
GROUP BY type, encoding
ORDER BY memory_bytes DESC, keys DESC, type, encoding
