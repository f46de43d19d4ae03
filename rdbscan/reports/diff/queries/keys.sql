-- name: keys
-- answers: How many keys were added, removed and changed (same name, another type, encoding,
--          length, size, memory or expiry) in each family, and the memory they account for;
--          families with the most changed keys first.
-- params:
--   top (20)   families listed; 0 = all
-- columns: pattern, added, removed, changed, added_memory_bytes, removed_memory_bytes,
--   changed_delta_memory_bytes (new minus old memory of the changed keys), then over every
--   family: total_added, total_removed, total_changed
WITH per AS (
    SELECT pattern,
           count(*) FILTER (WHERE change = 'added') AS added,
           count(*) FILTER (WHERE change = 'removed') AS removed,
           count(*) FILTER (WHERE change = 'changed') AS changed,
           coalesce(sum(new_memory_bytes) FILTER (WHERE change = 'added'), 0)::BIGINT AS added_memory_bytes,
           coalesce(sum(old_memory_bytes) FILTER (WHERE change = 'removed'), 0)::BIGINT AS removed_memory_bytes,
           coalesce(sum(new_memory_bytes - old_memory_bytes) FILTER (WHERE change = 'changed'), 0)::BIGINT
               AS changed_delta_memory_bytes
    FROM dchanges
    GROUP BY pattern
), totals AS (
    SELECT coalesce(sum(added), 0)::BIGINT AS total_added, coalesce(sum(removed), 0)::BIGINT AS total_removed,
           coalesce(sum(changed), 0)::BIGINT AS total_changed
    FROM per
)
SELECT per.*, totals.*
FROM totals LEFT JOIN per ON true
ORDER BY per.added + per.removed + per.changed DESC, per.pattern
LIMIT (CASE WHEN $top > 0 THEN $top ELSE 9223372036854775807 END)
