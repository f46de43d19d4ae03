-- name: chart_expiry_timeline
-- answers: When the keys with a TTL expire, after the snapshot, on a logarithmic time axis (TTLs
--          run from seconds to decades in one dump: equal buckets would squash all but the
--          longest into the first): keys and memory per bucket, `per_decade` buckets per power
--          of ten of seconds; bucket b holds the TTLs from 10^(b / per_decade) s up to the next
--          bucket's, bucket 0 also those under 1 s. For the HTML report's expiry timeline.
-- params:
--   per_decade (4)   buckets per power of ten
SELECT greatest(floor(log10(greatest(ttl_ms, 1) / 1000.0) * $per_decade), 0)::INTEGER AS bucket,
       count(*) AS keys,
       sum(memory_bytes) AS memory_bytes
FROM rkeys
WHERE ttl_ms > 0
GROUP BY bucket
ORDER BY bucket
