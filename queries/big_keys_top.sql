-- name: big_keys_top
-- answers: The largest keys of each type, ranked by memory and separately by length (element
--          count; bytes for strings).
-- params:
--   top (10)   keys per type and ranking
SELECT ranking, type, rank, dump_id, db, key, encoding, length, memory_bytes,
       expire_at_ms IS NOT NULL AS has_ttl
FROM (
    SELECT 'memory' AS ranking, *,
           row_number() OVER (PARTITION BY type ORDER BY memory_bytes DESC, length DESC, key) AS rank
    FROM rkeys
    UNION ALL BY NAME
    SELECT 'length' AS ranking, *,
           row_number() OVER (PARTITION BY type ORDER BY length DESC NULLS LAST, memory_bytes DESC, key) AS rank
    FROM rkeys
)
WHERE rank <= $top
ORDER BY ranking DESC, type, rank
