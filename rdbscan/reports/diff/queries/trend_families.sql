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
WITH snaps AS (
    SELECT series, snapshot_id, min(days) AS days FROM tsnap GROUP BY series, snapshot_id
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
    FROM tfit
), kept AS (
    SELECT * FROM ranked
    WHERE $top = 0 OR rank <= $top OR shrink_rank <= $top
), points AS (
    -- the points of the families listed (each snapshot, 0 where the family has no key), from
    -- their keys alone
    SELECT k.series, k.pattern,
           list({'snapshot_id': s.snapshot_id, 'keys': coalesce(p.keys, 0),
                 'memory_bytes': coalesce(p.memory_bytes, 0)::BIGINT}
                ORDER BY s.days, s.snapshot_id) AS points
    FROM kept AS k
    JOIN snaps AS s USING (series)
    LEFT JOIN (SELECT series, snapshot_id, pattern, count(*) AS keys, sum(memory_bytes) AS memory_bytes
               FROM tkeys SEMI JOIN kept USING (series, pattern)
               GROUP BY series, snapshot_id, pattern) AS p USING (series, pattern, snapshot_id)
    GROUP BY k.series, k.pattern
)
SELECT k.series, k.pattern, p.points, k.first_keys, k.last_keys, k.first_memory_bytes,
       k.last_memory_bytes, k.memory_growth, k.memory_per_day, k.keys_per_day, k.rank,
       k.shrink_rank, k.families_total
FROM kept AS k JOIN points AS p USING (series, pattern)
ORDER BY k.series, k.rank
