-- name: chart_expiry_timeline
-- answers: When the keys with a TTL expire, after the snapshot: keys and memory per time bucket of
--          equal width, from the snapshot to the time by which 95 % of them have expired; the last 5 %
--          (far outliers squash a timeline) are counted in one more bucket, `later` (bucket =
--          buckets). For the HTML report's expiry timeline.
-- params:
--   buckets (120)   number of buckets
WITH t AS (
    SELECT ttl_ms, memory_bytes FROM rkeys WHERE ttl_ms > 0
), span AS (
    SELECT greatest(quantile_disc(ttl_ms, 0.95), 1000) AS end_ms FROM t
)
SELECT CASE WHEN ttl_ms > end_ms THEN $buckets
            ELSE least(floor(ttl_ms * $buckets / end_ms), $buckets - 1) END::INTEGER AS bucket,
       any_value(end_ms) / $buckets AS bucket_ms,
       count(*) AS keys,
       sum(memory_bytes) AS memory_bytes
FROM t CROSS JOIN span
GROUP BY bucket
ORDER BY bucket
