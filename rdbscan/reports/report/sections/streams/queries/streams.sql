-- name: streams
-- answers: The largest streams with their consumer groups, consumers and pending entries (PEL):
--          a big PEL means messages delivered but never acknowledged; Redis 8.8's NACKed ids
--          (XNACK: given back by a consumer, in the PEL with no owner), NULL before RDB 14.
-- params:
--   top (10)   streams returned, longest first; groups detailed per stream, most pending first
WITH listed AS (
    SELECT k.dump_id, k.db, k.key, s.length, k.memory_bytes, s.listpacks, s.groups, s.consumers, s.pending,
           s.first_id, s.last_id, s.entries_added, k.expire_at_ms IS NOT NULL AS has_ttl
    FROM rkeys AS k
    JOIN streams AS s ON s.dump_id = k.dump_id AND s.db = k.db AND s.key = k.key
    ORDER BY s.length DESC, k.memory_bytes DESC, k.key, k.dump_id, k.db
    LIMIT $top
), g AS (
    -- the listed streams' groups only, the `top` with most pending entries each (a heap per
    -- stream: a stream may have a million groups)
    SELECT sg.dump_id, sg.db, sg.key,
           min_by(sg.group_name || ' (' || sg.consumers || if(sg.consumers = 1, ' consumer, ', ' consumers, ')
                  || sg.pending || ' pending'
                  || coalesce(', ' || sg.nacked || ' nacked', '') || ')',
                  {'p': -sg.pending, 'n': sg.group_name}, greatest($top, 1)) AS group_details,
           sum(sg.nacked) AS nacked
    FROM stream_groups AS sg
    SEMI JOIN listed AS l ON l.dump_id = sg.dump_id AND l.db = sg.db AND l.key = sg.key
    GROUP BY ALL
)
SELECT l.dump_id, l.db, l.key, l.length, l.memory_bytes, l.listpacks, l.groups, l.consumers, l.pending,
       l.first_id, l.last_id, l.entries_added, coalesce(g.group_details, []) AS group_details, l.has_ttl,
       g.nacked
FROM listed AS l
LEFT JOIN g ON g.dump_id = l.dump_id AND g.db = l.db AND g.key = l.key
ORDER BY l.length DESC, l.memory_bytes DESC, l.key, l.dump_id, l.db
