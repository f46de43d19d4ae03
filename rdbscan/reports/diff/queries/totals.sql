-- name: totals
-- answers: How the keyspace changed as a whole, per logical database and per type: keys, memory
--          and keys with a TTL in the old and the new snapshot, their difference and growth (the
--          difference over the old value; NULL when the old value is 0). The `all` row also
--          compares the servers' used-mem at save time (aux used-mem, summed over the shards).
-- params: none
-- columns: scope (all | db | type), name (the db number or type; NULL for all), then old_, new_,
--   delta_ and growth for keys, memory_bytes, keys_with_ttl and (scope all) used_mem
WITH per AS (
    SELECT side, db, type, sum(keys) AS keys, sum(memory_bytes) AS memory_bytes,
           coalesce(sum(keys) FILTER (WHERE bucket <> 'no ttl'), 0) AS keys_with_ttl
    FROM dstats
    GROUP BY side, db, type
), scoped AS (
    SELECT 'all' AS scope, NULL::VARCHAR AS name, side,
           sum(keys) AS keys, sum(memory_bytes) AS memory_bytes, sum(keys_with_ttl) AS keys_with_ttl
    FROM per GROUP BY side
    UNION ALL
    SELECT 'db', db::VARCHAR, side, sum(keys), sum(memory_bytes), sum(keys_with_ttl)
    FROM per GROUP BY db, side
    UNION ALL
    SELECT 'type', type, side, sum(keys), sum(memory_bytes), sum(keys_with_ttl)
    FROM per GROUP BY type, side
), both_sides AS (
    -- the `all` row exists even when both snapshots are empty
    SELECT 'all' AS scope, NULL::VARCHAR AS name
    UNION
    SELECT DISTINCT scope, name FROM scoped
), sided AS (
    SELECT b.scope, b.name,
           coalesce(sum(s.keys) FILTER (WHERE s.side = 'old'), 0)::BIGINT AS old_keys,
           coalesce(sum(s.keys) FILTER (WHERE s.side = 'new'), 0)::BIGINT AS new_keys,
           coalesce(sum(s.memory_bytes) FILTER (WHERE s.side = 'old'), 0)::BIGINT AS old_memory_bytes,
           coalesce(sum(s.memory_bytes) FILTER (WHERE s.side = 'new'), 0)::BIGINT AS new_memory_bytes,
           coalesce(sum(s.keys_with_ttl) FILTER (WHERE s.side = 'old'), 0)::BIGINT AS old_keys_with_ttl,
           coalesce(sum(s.keys_with_ttl) FILTER (WHERE s.side = 'new'), 0)::BIGINT AS new_keys_with_ttl
    FROM both_sides AS b
    LEFT JOIN scoped AS s ON s.scope = b.scope AND s.name IS NOT DISTINCT FROM b.name
    GROUP BY b.scope, b.name
), used AS (
    -- NULL when a dump of that side does not record used-mem
    SELECT CASE WHEN count(*) FILTER (WHERE side = 'old' AND used_mem IS NULL) = 0
                THEN sum(used_mem) FILTER (WHERE side = 'old') END::BIGINT AS old_used_mem,
           CASE WHEN count(*) FILTER (WHERE side = 'new' AND used_mem IS NULL) = 0
                THEN sum(used_mem) FILTER (WHERE side = 'new') END::BIGINT AS new_used_mem
    FROM dsnap
)
SELECT p.scope, p.name,
       p.old_keys, p.new_keys, p.new_keys - p.old_keys AS delta_keys,
       (p.new_keys - p.old_keys) / nullif(p.old_keys, 0) AS keys_growth,
       p.old_memory_bytes, p.new_memory_bytes, p.new_memory_bytes - p.old_memory_bytes AS delta_memory_bytes,
       (p.new_memory_bytes - p.old_memory_bytes) / nullif(p.old_memory_bytes, 0) AS memory_growth,
       p.old_keys_with_ttl, p.new_keys_with_ttl, p.new_keys_with_ttl - p.old_keys_with_ttl AS delta_keys_with_ttl,
       (p.new_keys_with_ttl - p.old_keys_with_ttl) / nullif(p.old_keys_with_ttl, 0) AS keys_with_ttl_growth,
       CASE WHEN p.scope = 'all' THEN u.old_used_mem END AS old_used_mem,
       CASE WHEN p.scope = 'all' THEN u.new_used_mem END AS new_used_mem,
       CASE WHEN p.scope = 'all' THEN u.new_used_mem - u.old_used_mem END AS delta_used_mem,
       CASE WHEN p.scope = 'all' THEN (u.new_used_mem - u.old_used_mem) / nullif(u.old_used_mem, 0) END AS used_mem_growth
FROM sided AS p CROSS JOIN used AS u
ORDER BY list_position(['all', 'db', 'type'], p.scope),
         CASE WHEN p.scope = 'db' THEN p.name::INTEGER END, p.name
