-- name: hash_field_ttl
-- answers: Which hashes carry field TTLs (hash field expiration, Redis 7.4+), how many fields, and
--          when the first field expires relative to the snapshot.
-- params:
--   top (10)   hashes returned, most fields with TTL first
SELECT dump_id, db, key, encoding, length, fields_with_ttl,
       fields_with_ttl / nullif(length, 0) AS field_ttl_share,
       min_field_expire_ms, min_field_expire_ms - snapshot_ms AS min_field_ttl_ms,
       memory_bytes, expire_at_ms IS NOT NULL AS has_key_ttl
FROM rkeys
WHERE fields_with_ttl > 0
ORDER BY fields_with_ttl DESC, memory_bytes DESC, key, dump_id, db
LIMIT $top
