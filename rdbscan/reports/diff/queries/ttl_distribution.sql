-- name: ttl_distribution
-- answers: How the remaining TTLs (at each snapshot's time) are distributed in the old and the new
--          snapshot, by keys and memory; keys without TTL and keys already expired are buckets of
--          their own.
-- params: none
WITH b AS (
    SELECT side, bucket, sum(keys) AS keys, sum(memory_bytes) AS memory_bytes
    FROM dstats
    GROUP BY side, bucket
)
SELECT bucket,
       coalesce(sum(keys) FILTER (WHERE side = 'old'), 0)::BIGINT AS old_keys,
       coalesce(sum(keys) FILTER (WHERE side = 'new'), 0)::BIGINT AS new_keys,
       (coalesce(sum(keys) FILTER (WHERE side = 'new'), 0) - coalesce(sum(keys) FILTER (WHERE side = 'old'), 0))::BIGINT
           AS delta_keys,
       coalesce(sum(memory_bytes) FILTER (WHERE side = 'old'), 0)::BIGINT AS old_memory_bytes,
       coalesce(sum(memory_bytes) FILTER (WHERE side = 'new'), 0)::BIGINT AS new_memory_bytes
FROM b
GROUP BY bucket
ORDER BY ttl_bucket_order(bucket)
