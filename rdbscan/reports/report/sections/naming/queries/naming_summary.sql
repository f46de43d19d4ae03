-- name: naming_summary
-- answers: How many distinct keys (and how much memory) break at least one enabled naming rule.
-- params: none
-- Each key once: its first_rule row, and the keys that break the opt-in type-name alone (their
-- rows grouped, those of the type-name keys only: none unless the rule is on). Not a GROUP BY of
-- every row of rnaming: 0.28 CPU s for its 600,000 rows on the benchmark's `mixed` dump.
SELECT count(*) AS keys, coalesce(sum(memory_bytes), 0) AS memory_bytes,
       (SELECT count(*) FROM rkeys) AS keys_checked
FROM (SELECT memory_bytes FROM rnaming WHERE first_rule
      UNION ALL
      SELECT any_value(memory_bytes)
      FROM rnaming
      WHERE (dump_id, db, key) IN (SELECT dump_id, db, key FROM rnaming WHERE rule = 'type-name')
      GROUP BY dump_id, db, key
      HAVING NOT bool_or(first_rule))
