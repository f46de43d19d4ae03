-- name: overview_dbs
-- answers: How many keys, keys with a TTL and how much memory each logical database holds: the
--          databases with the most keys (at most `top`, listed by number), each row carrying the
--          totals over every database (a dump may hold a million of them).
-- params:
--   top (10)   databases listed, most keys first; 0 = all
WITH per AS (
    SELECT db, count(*) AS keys, count(expire_at_ms) AS keys_with_ttl, sum(memory_bytes) AS memory_bytes
    FROM rkeys
    GROUP BY db
), tot AS (
    SELECT count(*) AS databases, sum(keys) AS all_keys, sum(keys_with_ttl) AS all_keys_with_ttl,
           sum(memory_bytes) AS all_memory_bytes
    FROM per
), listed AS (
    SELECT * FROM per
    ORDER BY keys DESC, db
    LIMIT (CASE WHEN $top > 0 THEN $top ELSE 9223372036854775807 END)
)
SELECT l.db, l.keys, l.keys_with_ttl, l.memory_bytes,
       t.databases, t.all_keys, t.all_keys_with_ttl, t.all_memory_bytes
FROM listed AS l CROSS JOIN tot AS t
ORDER BY l.db
