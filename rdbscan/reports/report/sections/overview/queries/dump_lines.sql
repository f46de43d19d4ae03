-- name: dump_lines
-- answers: One line per dump of a report over several dumps, for any number of dumps, in one
--          grouped pass over the keys (GROUP BY dump_id): its server, file, keys, memory, whether
--          it was read to the end (and why not: error_kind) and its checksum, and the figures of
--          the verdict's checks that group by dump: its keys without TTL and those already expired
--          at snapshot time, as ttl_summary counts them (docs/report.md, "Several dumps").
-- params: none
WITH per_dump AS (
    SELECT dump_id,
           count(*) AS keys,
           sum(memory_bytes) AS memory_bytes,
           count(*) - count(expire_at_ms) AS keys_without_ttl,
           coalesce(sum(memory_bytes) FILTER (WHERE expire_at_ms IS NULL), 0) AS memory_without_ttl,
           count(*) FILTER (WHERE ttl_ms <= 0) AS expired_at_snapshot,
           coalesce(sum(memory_bytes) FILTER (WHERE ttl_ms <= 0), 0) AS memory_expired_at_snapshot
    FROM rkeys
    GROUP BY dump_id
)
SELECT d.dump_id, d.path, d.server, d.server_version,
       coalesce(p.keys, 0) AS keys,
       coalesce(p.memory_bytes, 0) AS memory_bytes,
       d.complete IS DISTINCT FROM false AS complete,
       d.error_kind, d.checksum,
       coalesce(p.keys_without_ttl, 0) AS keys_without_ttl,
       coalesce(p.memory_without_ttl, 0) AS memory_without_ttl,
       coalesce(p.expired_at_snapshot, 0) AS expired_at_snapshot,
       coalesce(p.memory_expired_at_snapshot, 0) AS memory_expired_at_snapshot
FROM dumps AS d
JOIN rsnap AS s USING (dump_id)
LEFT JOIN per_dump AS p USING (dump_id)
ORDER BY d.dump_id
