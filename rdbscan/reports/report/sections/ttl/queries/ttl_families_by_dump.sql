-- name: ttl_families_by_dump
-- answers: The cache/session-like families without TTL (looks_ephemeral) among the families that
--          each dump's report alone lists in ttl_families (its `top`, in that order: no TTL at all
--          first, then looks_ephemeral, then memory without TTL), in a report over many dumps
--          (ttl/build.py by_dump).
-- params:
--   top (20)   families ranked per dump; 0 = all
SELECT dump_id, pattern, keys_without_ttl, memory_without_ttl, looks_ephemeral
FROM (
    SELECT dump_id, pattern, keys - keys_with_ttl AS keys_without_ttl, memory_without_ttl,
           looks_ephemeral(pattern) AS looks_ephemeral,
           row_number() OVER (PARTITION BY dump_id
                              ORDER BY keys_with_ttl = 0 DESC, looks_ephemeral(pattern) DESC,
                                       memory_without_ttl DESC, pattern) AS rn
    FROM rfamilies_by_dump
    WHERE keys > keys_with_ttl
)
WHERE looks_ephemeral AND ($top = 0 OR rn <= $top)
ORDER BY dump_id, rn
