-- name: _tfit
-- answers: (base relation, not a trend part) per instance and key family, the figures that rank
--          it: keys and memory at the instance's first and last snapshot, and the growth per day
--          (least-squares slope over every snapshot, 0 where the family has no key) of memory and
--          keys. A TEMP TABLE (`tfit`) that trend_families reads: DuckDB spills a table, where the
--          same relation inlined into trend_families, beside the ranking and the points of the
--          families listed, ran out of memory at 128 MB over two million one-key families
--          (`ratelimit:10.1.2.3`, docs/benchmarks.md).
-- params: none (the pattern comes from `tkeys`)
-- columns: series, pattern, first_keys, last_keys, first_memory_bytes, last_memory_bytes,
--   memory_per_day, keys_per_day
--
-- Two groupings of numbers, no grid of every family at every snapshot: a family's snapshots
-- without a key add 0 to the slope, which is therefore sum(c * y) over the snapshots it has.
-- With t a snapshot's time in ms since the instance's first, n the instance's snapshots and
-- c = n * t - sum(t) (the time from the mean, times n), the least-squares slope is
-- n * sum(c * y) / sum(c * c) per ms. Every product and sum is an integer (HUGEINT), so the
-- slope is the same whatever order the rows come in; the day's 86,400,000 ms multiply the
-- numerator before the one division, so a slope that is a whole number per day comes out whole
-- (regr_slope, updated row by row, gave 27869183999.999996 for 27869184000). The
-- grid (each family's zeros by a join of every family with every snapshot) ran out of memory at
-- 128 MB over two snapshots of a million different one-key families each.
CREATE OR REPLACE TEMP TABLE tfit AS
WITH per AS (
    SELECT series, snapshot_id, pattern, count(*) AS keys, sum(memory_bytes) AS memory_bytes
    FROM tkeys
    GROUP BY series, snapshot_id, pattern
), snaps AS (
    SELECT series, snapshot_id, min(days) AS days, min(snapshot_ms) AS ms
    FROM tsnap
    GROUP BY series, snapshot_id
), timed AS (
    SELECT series, snapshot_id,
           ms - min(ms) OVER (PARTITION BY series) AS t,
           count(*) OVER (PARTITION BY series) AS n,
           -- each instance's first and last snapshot (by time, then id): points[1] and points[-1]
           row_number() OVER (PARTITION BY series ORDER BY days, snapshot_id) = 1 AS is_first,
           row_number() OVER (PARTITION BY series ORDER BY days DESC, snapshot_id DESC) = 1 AS is_last
    FROM snaps
), ends AS (
    SELECT series, snapshot_id, is_first, is_last, n,
           n::HUGEINT * t - sum(t) OVER (PARTITION BY series) AS c
    FROM timed
), spread AS (
    SELECT series, any_value(n) AS n, sum(c * c) AS cc FROM ends GROUP BY series
), fit AS (
    SELECT p.series, p.pattern,
           coalesce(max(p.keys) FILTER (WHERE e.is_first), 0) AS first_keys,
           coalesce(max(p.keys) FILTER (WHERE e.is_last), 0) AS last_keys,
           coalesce(max(p.memory_bytes) FILTER (WHERE e.is_first), 0)::BIGINT AS first_memory_bytes,
           coalesce(max(p.memory_bytes) FILTER (WHERE e.is_last), 0)::BIGINT AS last_memory_bytes,
           sum(e.c * p.memory_bytes) AS cy_memory,
           sum(e.c * p.keys) AS cy_keys
    FROM per AS p
    JOIN ends AS e USING (series, snapshot_id)
    GROUP BY p.series, p.pattern
)
SELECT f.series, f.pattern, f.first_keys, f.last_keys, f.first_memory_bytes, f.last_memory_bytes,
       (s.n * f.cy_memory)::DOUBLE * 86400000 / nullif(s.cc, 0)::DOUBLE AS memory_per_day,
       (s.n * f.cy_keys)::DOUBLE * 86400000 / nullif(s.cc, 0)::DOUBLE AS keys_per_day
FROM fit AS f
JOIN spread AS s USING (series)
