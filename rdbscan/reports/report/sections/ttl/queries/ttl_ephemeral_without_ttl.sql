-- name: ttl_ephemeral_without_ttl
-- answers: How many keys without a TTL the families whose names look like caches, sessions,
--          tokens or locks hold (`--fail-on no-ttl`): the sum of ttl_families' keys_without_ttl
--          over its looks_ephemeral rows, without listing every family (a keyspace can hold a
--          family per key: a million rows, which ran out of memory).
-- params: none
SELECT coalesce(sum(keys - keys_with_ttl), 0)::BIGINT AS keys_without_ttl
FROM rfamilies
WHERE keys > keys_with_ttl AND looks_ephemeral(pattern)
