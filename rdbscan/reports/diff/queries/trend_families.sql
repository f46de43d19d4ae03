-- name: trend_families
-- answers: Per instance, which key families grow fastest and which shrink fastest (vanished
--          ones included): keys and memory at each snapshot (0 where the family has no key),
--          the growth per day (least-squares slope over the snapshots) of memory and keys, and
--          the growth from the first snapshot to the last.
-- params:
--   top (10)   families per instance, fastest memory growth per day first, and as many of those
--              that shrink, fastest loss first; 0 = all
-- columns: series, pattern, points (a list of {snapshot_id, keys, memory_bytes}, oldest first),
--   first_keys, last_keys, first_memory_bytes, last_memory_bytes, memory_growth (last over first
--   minus one; NULL when the family was absent at first), memory_per_day, keys_per_day, rank,
--   shrink_rank (among the families whose memory per day is below 0, fastest loss first; NULL
--   for the others), families_total (families of the instance before the top cut)
WITH per AS (
    SELECT series, snapshot_id, pattern, count(*) AS keys, sum(memory_bytes) AS memory_bytes
    FROM tkeys
    GROUP BY series, snapshot_id, pattern
), snaps AS (
    SELECT series, snapshot_id, min(days) AS days FROM tsnap GROUP BY series, snapshot_id
), fams AS (
    SELECT DISTINCT series, pattern FROM per
), grid AS (
    SELECT f.series, f.pattern, s.snapshot_id, s.days,
           coalesce(p.keys, 0) AS keys, coalesce(p.memory_bytes, 0)::BIGINT AS memory_bytes
    FROM fams AS f
    JOIN snaps AS s USING (series)
    LEFT JOIN per AS p USING (series, pattern, snapshot_id)
), fit AS (
    SELECT series, pattern,
           list({'snapshot_id': snapshot_id, 'keys': keys, 'memory_bytes': memory_bytes}
                ORDER BY days, snapshot_id) AS points,
           regr_slope(memory_bytes, days) AS memory_per_day,
           regr_slope(keys, days) AS keys_per_day
    FROM grid
    GROUP BY series, pattern
), ranked AS (
    SELECT series, pattern, points,
           points[1].keys AS first_keys, points[-1].keys AS last_keys,
           points[1].memory_bytes AS first_memory_bytes, points[-1].memory_bytes AS last_memory_bytes,
           (points[-1].memory_bytes - points[1].memory_bytes) / nullif(points[1].memory_bytes, 0) AS memory_growth,
           memory_per_day, keys_per_day,
           row_number() OVER (PARTITION BY series
                              ORDER BY memory_per_day DESC NULLS LAST, points[-1].memory_bytes DESC, pattern) AS rank,
           CASE WHEN memory_per_day < 0 THEN
               row_number() OVER (PARTITION BY series, memory_per_day < 0
                                  ORDER BY memory_per_day, points[1].memory_bytes DESC, pattern)
           END AS shrink_rank,
           count(*) OVER (PARTITION BY series) AS families_total
    FROM fit
)
SELECT * FROM ranked
WHERE $top = 0 OR rank <= $top OR shrink_rank <= $top
ORDER BY series, rank
