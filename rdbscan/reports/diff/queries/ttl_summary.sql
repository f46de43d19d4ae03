-- name: ttl_summary
-- answers: How expiry changed: keys that lost their expiry (in both snapshots, a TTL before and
--          none now), keys that gained one, keys whose expiry time moved, keys with a TTL in each
--          snapshot, and keys already expired at each snapshot's time (active expiry falling behind).
-- params: none
WITH k AS (
    SELECT count(*) FILTER (WHERE change = 'changed' AND old_expire_at_ms IS NOT NULL AND new_expire_at_ms IS NULL) AS lost_expiry,
           count(*) FILTER (WHERE change = 'changed' AND old_expire_at_ms IS NULL AND new_expire_at_ms IS NOT NULL) AS gained_expiry,
           count(*) FILTER (WHERE change = 'changed' AND old_expire_at_ms <> new_expire_at_ms) AS expiry_moved,
           coalesce(sum(old_memory_bytes) FILTER (WHERE change = 'changed' AND old_expire_at_ms IS NOT NULL
                                                  AND new_expire_at_ms IS NULL), 0)::BIGINT AS lost_expiry_memory_bytes
    FROM dchanges
), s AS (
    SELECT coalesce(sum(keys) FILTER (WHERE side = 'old' AND bucket <> 'no ttl'), 0)::BIGINT AS old_keys_with_ttl,
           coalesce(sum(keys) FILTER (WHERE side = 'new' AND bucket <> 'no ttl'), 0)::BIGINT AS new_keys_with_ttl,
           coalesce(sum(keys) FILTER (WHERE side = 'old' AND bucket = 'expired'), 0)::BIGINT AS old_expired_at_snapshot,
           coalesce(sum(keys) FILTER (WHERE side = 'new' AND bucket = 'expired'), 0)::BIGINT AS new_expired_at_snapshot
    FROM dstats
)
SELECT k.*, s.*, s.new_expired_at_snapshot - s.old_expired_at_snapshot AS delta_expired_at_snapshot
FROM k CROSS JOIN s
