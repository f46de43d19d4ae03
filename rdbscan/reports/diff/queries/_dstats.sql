-- name: _dstats
-- answers: (base relation, not a diff part) per side, db, type and remaining-TTL bucket (the
--          report's ttl_bucket: 'no ttl', 'expired', '< 1 min', ...): keys and memory. One pass
--          over both snapshots' keys, which totals, ttl_summary and ttl_distribution read.
-- params: none
CREATE OR REPLACE TEMP TABLE dstats AS
SELECT side, db, type, ttl_bucket(ttl_ms) AS bucket,
       count(*) AS keys,
       sum(memory_bytes) AS memory_bytes
FROM dkeys
GROUP BY side, db, type, bucket
