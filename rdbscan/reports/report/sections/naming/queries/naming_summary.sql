-- name: naming_summary
-- answers: How many distinct keys (and how much memory) break at least one enabled naming rule.
-- params: none
SELECT count(*) AS keys, coalesce(sum(memory_bytes), 0) AS memory_bytes,
       (SELECT count(*) FROM rkeys) AS keys_checked
FROM (SELECT dump_id, db, key, any_value(memory_bytes) AS memory_bytes
      FROM rnaming GROUP BY dump_id, db, key)
