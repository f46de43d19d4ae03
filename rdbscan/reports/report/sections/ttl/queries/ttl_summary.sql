-- name: ttl_summary
-- answers: Relative to the snapshot time (aux ctime, not today): how many keys and how much memory
--          have no TTL, how many keys were already expired when the dump was written, and how many
--          hashes carry field TTLs.
-- params: none
SELECT count(*) AS keys,
       count(expire_at_ms) AS keys_with_ttl,
       count(*) - count(expire_at_ms) AS keys_without_ttl,
       coalesce(sum(memory_bytes), 0) AS memory_bytes,
       coalesce(sum(memory_bytes) FILTER (WHERE expire_at_ms IS NULL), 0) AS memory_without_ttl,
       coalesce(sum(memory_bytes) FILTER (WHERE expire_at_ms IS NULL) / nullif(sum(memory_bytes), 0), 0) AS memory_share_without_ttl,
       coalesce((count(*) - count(expire_at_ms)) / nullif(count(*), 0), 0) AS key_share_without_ttl,
       count(*) FILTER (WHERE ttl_ms <= 0) AS expired_at_snapshot,
       coalesce(sum(memory_bytes) FILTER (WHERE ttl_ms <= 0), 0) AS memory_expired_at_snapshot,
       count(*) FILTER (WHERE ttl_ms > 0 AND ttl_ms < 3600000) AS expiring_within_1h,
       count(*) FILTER (WHERE fields_with_ttl > 0) AS hashes_with_field_ttl,
       min(snapshot_ms) AS snapshot_ms
FROM rkeys
