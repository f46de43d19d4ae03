-- name: slots_by_memory
-- answers: The cluster hash slots holding the most memory.
-- params:
--   top (10)   slots returned
SELECT slot, count(*) AS keys, sum(memory_bytes) AS memory_bytes,
       sum(memory_bytes) / nullif(sum(sum(memory_bytes)) OVER (), 0) AS memory_share,
       arg_max(key, memory_bytes) AS largest_key
FROM rkeys
GROUP BY slot
QUALIFY row_number() OVER (ORDER BY sum(memory_bytes) DESC, count(*) DESC, slot) <= $top
ORDER BY memory_bytes DESC, keys DESC, slot
