-- name: trend_snapshots
-- answers: How many keys, keys with a TTL and how much memory each snapshot of each instance
--          holds, and the instance's growth per day (least squares over its snapshots).
-- params: none
-- columns: series, snapshot_id, days (since the series' first snapshot), keys, keys_with_ttl,
--   memory_bytes, memory_per_day and keys_per_day (per series; NULL with one snapshot)
WITH s AS (
    SELECT t.series, t.snapshot_id, min(t.days) AS days
    FROM tsnap AS t
    GROUP BY t.series, t.snapshot_id
), k AS (
    SELECT series, snapshot_id, count(*) AS keys, count(expire_at_ms) AS keys_with_ttl,
           sum(memory_bytes) AS memory_bytes
    FROM tkeys
    GROUP BY series, snapshot_id
), both_ AS (
    SELECT s.series, s.snapshot_id, s.days,
           coalesce(k.keys, 0) AS keys, coalesce(k.keys_with_ttl, 0) AS keys_with_ttl,
           coalesce(k.memory_bytes, 0)::BIGINT AS memory_bytes
    FROM s LEFT JOIN k USING (series, snapshot_id)
)
SELECT *,
       regr_slope(memory_bytes, days) OVER (PARTITION BY series) AS memory_per_day,
       regr_slope(keys, days) OVER (PARTITION BY series) AS keys_per_day
FROM both_
ORDER BY series, days, snapshot_id
