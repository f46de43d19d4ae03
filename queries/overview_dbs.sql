-- name: overview_dbs
-- answers: How many keys, keys with a TTL and how much memory each logical database holds.
-- params: none
SELECT db,
       count(*) AS keys,
       count(expire_at_ms) AS keys_with_ttl,
       sum(memory_bytes) AS memory_bytes
FROM rkeys
GROUP BY db
ORDER BY db
