-- name: families
-- answers: Which key families grew or shrank most: keys and memory in the old and the new
--          snapshot, ranked by the absolute change of memory; which families are new and which
--          vanished; the keys added, removed and changed in each; growth per day when both
--          snapshot times are known (aux ctime or the file's modification time).
-- params:
--   top (20)   families listed, largest absolute memory change first; 0 = all
-- columns: pattern, status (new | vanished | changed | unchanged), old_/new_/delta_ keys and
--   memory_bytes, memory_growth (delta over old; NULL for a new family), memory_per_day and
--   keys_per_day, added, removed, changed (keys), then over every family before the top cut:
--   total_families, new_families, vanished_families
WITH f AS (
    SELECT pattern, old_keys, new_keys, old_memory_bytes, new_memory_bytes FROM dfamily_sides
), k AS (
    SELECT pattern,
           count(*) FILTER (WHERE change = 'added') AS added,
           count(*) FILTER (WHERE change = 'removed') AS removed,
           count(*) FILTER (WHERE change = 'changed') AS changed
    FROM dchanges
    GROUP BY pattern
), ranked AS (
    SELECT f.pattern,
           CASE WHEN f.old_keys = 0 THEN 'new' WHEN f.new_keys = 0 THEN 'vanished'
                WHEN coalesce(k.added, 0) + coalesce(k.removed, 0) + coalesce(k.changed, 0) > 0 THEN 'changed'
                ELSE 'unchanged' END AS status,
           f.old_keys, f.new_keys, f.new_keys - f.old_keys AS delta_keys,
           f.old_memory_bytes, f.new_memory_bytes, f.new_memory_bytes - f.old_memory_bytes AS delta_memory_bytes,
           (f.new_memory_bytes - f.old_memory_bytes) / nullif(f.old_memory_bytes, 0) AS memory_growth,
           (f.new_memory_bytes - f.old_memory_bytes) / nullif(s.days, 0) AS memory_per_day,
           (f.new_keys - f.old_keys) / nullif(s.days, 0) AS keys_per_day,
           coalesce(k.added, 0) AS added, coalesce(k.removed, 0) AS removed, coalesce(k.changed, 0) AS changed,
           count(*) OVER () AS total_families,
           count(CASE WHEN f.old_keys = 0 THEN 1 END) OVER () AS new_families,
           count(CASE WHEN f.new_keys = 0 THEN 1 END) OVER () AS vanished_families
    FROM f LEFT JOIN k USING (pattern) CROSS JOIN dspan AS s
)
SELECT * FROM ranked
ORDER BY abs(delta_memory_bytes) DESC, abs(delta_keys) DESC, pattern
LIMIT (CASE WHEN $top > 0 THEN $top ELSE 9223372036854775807 END)
