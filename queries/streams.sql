-- name: streams
-- answers: The largest streams with their consumer groups, consumers and pending entries (PEL):
--          a big PEL means messages delivered but never acknowledged.
-- params:
--   top (10)   streams returned, longest first
WITH g AS (
    SELECT dump_id, db, key,
           list(group_name || ' (' || consumers || ' consumers, ' || pending || ' pending)'
                ORDER BY pending DESC, group_name) AS group_details
    FROM stream_groups GROUP BY ALL
)
SELECT k.dump_id, k.db, k.key, s.length, k.memory_bytes, s.listpacks, s.groups, s.consumers, s.pending,
       s.first_id, s.last_id, s.entries_added, coalesce(g.group_details, []) AS group_details,
       k.expire_at_ms IS NOT NULL AS has_ttl
FROM rkeys AS k
JOIN streams AS s ON s.dump_id = k.dump_id AND s.db = k.db AND s.key = k.key
LEFT JOIN g ON g.dump_id = k.dump_id AND g.db = k.db AND g.key = k.key
ORDER BY s.length DESC, k.memory_bytes DESC, k.key
LIMIT $top
