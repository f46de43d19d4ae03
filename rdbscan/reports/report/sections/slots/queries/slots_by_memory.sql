-- name: slots_by_memory
-- answers: The cluster hash slots holding the most memory.
-- params:
--   top (10)   slots returned
SELECT slot, keys, memory_bytes,
       memory_bytes / nullif(sum(memory_bytes) OVER (), 0) AS memory_share,
       largest_key
FROM rslots
QUALIFY row_number() OVER (ORDER BY memory_bytes DESC, keys DESC, slot) <= $top
ORDER BY memory_bytes DESC, keys DESC, slot
