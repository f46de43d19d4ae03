-- name: ttl_lost
-- answers: Which families hold the keys that lost their expiry (a TTL in the old snapshot, none in
--          the new one: PERSIST, or SET without EX): keys, their memory now, and an example.
-- params:
--   top (20)   families listed, most keys first; 0 = all
SELECT pattern,
       count(*) AS keys,
       sum(new_memory_bytes)::BIGINT AS memory_bytes,
       min(key) AS example
FROM dchanges
WHERE change = 'changed' AND old_expire_at_ms IS NOT NULL AND new_expire_at_ms IS NULL
GROUP BY pattern
ORDER BY keys DESC, pattern
LIMIT (CASE WHEN $top > 0 THEN $top ELSE 9223372036854775807 END)
