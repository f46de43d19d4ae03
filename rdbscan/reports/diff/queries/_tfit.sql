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
CREATE OR REPLACE TEMP TABLE tfit AS
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
    -- per key (`ratelimit:10.1.2.3`); trend_families gathers the points of those it lists
    SELECT series, pattern,
           max(keys) FILTER (WHERE is_first) AS first_keys,
           max(keys) FILTER (WHERE is_last) AS last_keys,
           max(memory_bytes) FILTER (WHERE is_first) AS first_memory_bytes,
           max(memory_bytes) FILTER (WHERE is_last) AS last_memory_bytes,
           regr_slope(memory_bytes, days) AS memory_per_day,
           regr_slope(keys, days) AS keys_per_day
    FROM grid
    GROUP BY series, pattern
)
SELECT * FROM fit
