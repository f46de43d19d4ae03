-- name: slots_by_memory
-- answers: The cluster hash slots holding the most memory, with the largest key of each.
-- params:
--   top (10)   slots returned
WITH listed AS (
    SELECT slot, keys, memory_bytes,
           memory_bytes / nullif(sum(memory_bytes) OVER (), 0) AS memory_share
    FROM rslots
    QUALIFY row_number() OVER (ORDER BY memory_bytes DESC, keys DESC, slot) <= $top
), largest AS (
    -- the key with the most memory_bytes (the first in byte order on a tie) of the listed slots
    -- only: the scan reads the names of their keys alone, where the largest key of every slot
    -- read every key's name
    SELECT slot, arg_min(key, (-memory_bytes, key)) AS largest_key
    FROM rkeys
    WHERE slot IN (SELECT slot FROM listed)
    GROUP BY slot
)
SELECT slot, keys, memory_bytes, memory_share, largest_key
FROM listed JOIN largest USING (slot)
ORDER BY memory_bytes DESC, keys DESC, slot
