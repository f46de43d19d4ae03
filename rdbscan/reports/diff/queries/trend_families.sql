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
WITH per AS NOT MATERIALIZED (
    SELECT series, snapshot_id, pattern, count(*) AS keys, sum(memory_bytes) AS memory_bytes
    FROM tkeys
    GROUP BY series, snapshot_id, pattern
), snaps AS (
    SELECT series, snapshot_id, min(days) AS days FROM tsnap GROUP BY series, snapshot_id
), ends AS (
    -- each instance's first and last snapshot (by time, then id): points[1] and points[-1]
    SELECT series, snapshot_id,
           row_number() OVER (PARTITION BY series ORDER BY days, snapshot_id) = 1 AS is_first,
           row_number() OVER (PARTITION BY series ORDER BY days DESC, snapshot_id DESC) = 1 AS is_last
    FROM snaps
), fams AS (
    SELECT DISTINCT series, pattern FROM per
), grid AS NOT MATERIALIZED (
    SELECT f.series, f.pattern, s.snapshot_id, s.days, e.is_first, e.is_last,
           coalesce(p.keys, 0) AS keys, coalesce(p.memory_bytes, 0)::BIGINT AS memory_bytes
    FROM fams AS f
    JOIN snaps AS s USING (series)
    JOIN ends AS e USING (series, snapshot_id)
    LEFT JOIN per AS p USING (series, pattern, snapshot_id)
), fit AS (
    -- numbers only: a list per family cannot spill to disk, and an instance can hold a family
    -- per key (`ratelimit:10.1.2.3`); the points of the families listed are gathered below
    SELECT series, pattern,
           max(keys) FILTER (WHERE is_first) AS first_keys,
           max(keys) FILTER (WHERE is_last) AS last_keys,
           max(memory_bytes) FILTER (WHERE is_first) AS first_memory_bytes,
           max(memory_bytes) FILTER (WHERE is_last) AS last_memory_bytes,
           regr_slope(memory_bytes, days) AS memory_per_day,
           regr_slope(keys, days) AS keys_per_day
    FROM grid
    GROUP BY series, pattern
), ranked AS (
    SELECT series, pattern, first_keys, last_keys, first_memory_bytes, last_memory_bytes,
           (last_memory_bytes - first_memory_bytes) / nullif(first_memory_bytes, 0) AS memory_growth,
           memory_per_day, keys_per_day,
           row_number() OVER (PARTITION BY series
                              ORDER BY memory_per_day DESC NULLS LAST, last_memory_bytes DESC, pattern) AS rank,
           CASE WHEN memory_per_day < 0 THEN
               row_number() OVER (PARTITION BY series, memory_per_day < 0
                                  ORDER BY memory_per_day, first_memory_bytes DESC, pattern)
           END AS shrink_rank,
           count(*) OVER (PARTITION BY series) AS families_total
    FROM fit
), kept AS (
    SELECT * FROM ranked
    WHERE $top = 0 OR rank <= $top OR shrink_rank <= $top
), points AS (
    SELECT g.series, g.pattern,
           list({'snapshot_id': g.snapshot_id, 'keys': g.keys, 'memory_bytes': g.memory_bytes}
                ORDER BY g.days, g.snapshot_id) AS points
    FROM grid AS g SEMI JOIN kept USING (series, pattern)
    GROUP BY g.series, g.pattern
)
SELECT k.series, k.pattern, p.points, k.first_keys, k.last_keys, k.first_memory_bytes,
       k.last_memory_bytes, k.memory_growth, k.memory_per_day, k.keys_per_day, k.rank,
       k.shrink_rank, k.families_total
FROM kept AS k JOIN points AS p USING (series, pattern)
ORDER BY k.series, k.rank
