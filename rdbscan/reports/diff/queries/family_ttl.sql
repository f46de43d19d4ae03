-- name: family_ttl
-- answers: Which families, present in both snapshots, changed how they expire: the share of their
--          keys with a TTL (coverage) moved by at least `coverage_change`, or their median TTL
--          (at each snapshot's time) moved by at least `median_ttl_change` of the old one, or
--          appeared or went away.
-- params:
--   coverage_change (0.01)    change of the share of keys with a TTL worth reporting (0.01 = 1 point)
--   median_ttl_change (0.25)  relative change of the median TTL worth reporting
--   top (20)                  families listed, largest coverage change first; 0 = all
WITH f AS (
    SELECT pattern, old_keys, new_keys, old_keys_with_ttl, new_keys_with_ttl,
           old_median_ttl_ms, new_median_ttl_ms
    FROM dfamily_sides
    WHERE old_keys > 0 AND new_keys > 0
), c AS (
    SELECT *, old_keys_with_ttl / old_keys AS old_ttl_coverage, new_keys_with_ttl / new_keys AS new_ttl_coverage
    FROM f
)
SELECT pattern, old_keys, new_keys, old_keys_with_ttl, new_keys_with_ttl,
       old_ttl_coverage, new_ttl_coverage, new_ttl_coverage - old_ttl_coverage AS delta_ttl_coverage,
       old_median_ttl_ms, new_median_ttl_ms
FROM c
WHERE abs(new_ttl_coverage - old_ttl_coverage) >= $coverage_change
   OR (old_median_ttl_ms IS NULL) <> (new_median_ttl_ms IS NULL)
   OR abs(new_median_ttl_ms - old_median_ttl_ms) >= $median_ttl_change * old_median_ttl_ms
ORDER BY abs(new_ttl_coverage - old_ttl_coverage) DESC, pattern
LIMIT (CASE WHEN $top > 0 THEN $top ELSE 9223372036854775807 END)
