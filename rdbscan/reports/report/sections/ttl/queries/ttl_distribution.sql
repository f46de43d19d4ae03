-- name: ttl_distribution
-- answers: How remaining TTLs (relative to the snapshot) are distributed, by keys and memory; keys
--          without TTL and keys already expired at snapshot time are their own buckets.
-- params: none
SELECT ttl_bucket(ttl_ms) AS bucket,
       count(*) AS keys,
       sum(memory_bytes) AS memory_bytes,
       count(*) / sum(count(*)) OVER () AS key_share
FROM rkeys
GROUP BY bucket
ORDER BY ttl_bucket_order(bucket)
