-- name: encoding_candidates_summary
-- answers: Per type: how many keys are non-compact although they fit the compact thresholds, and
--          the total estimated saving (see encoding_candidates).
-- params:
--   from _rlimits.sql: *
SELECT type, count(*) AS keys, sum(memory_bytes) AS memory_bytes,
       sum(greatest(memory_bytes - estimated_bytes, 0)) AS savings_bytes
FROM rcandidates
GROUP BY type
ORDER BY savings_bytes DESC, type
