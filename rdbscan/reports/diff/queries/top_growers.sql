-- name: top_growers
-- answers: Which keys grew most in memory (keys in both snapshots, and new keys, which grew from
--          nothing): old and new type, length, encoding and memory.
-- params:
--   top (20)   keys listed
SELECT change, db, key, pattern, old_type, new_type, old_encoding, new_encoding, old_length, new_length,
       old_memory_bytes, new_memory_bytes,
       new_memory_bytes - coalesce(old_memory_bytes, 0) AS delta_memory_bytes
FROM dchanges
WHERE change <> 'removed' AND new_memory_bytes > coalesce(old_memory_bytes, 0)
ORDER BY delta_memory_bytes DESC, db, key
LIMIT $top
