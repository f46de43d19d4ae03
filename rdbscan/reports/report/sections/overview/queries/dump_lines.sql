-- name: dump_lines
-- answers: One line per dump of a report over several dumps, for any number of dumps, in one
--          grouped pass over the keys (GROUP BY dump_id): its server, file, keys, memory, whether
--          it was read to the end (and why not: error_kind) and its checksum, and the figures of the verdict's checks that group by dump:
--          its big keys (critical, and the others; how many are strings), its keys without TTL and those already
--          expired at snapshot time, as ttl_summary counts them (docs/report.md, "Several dumps").
-- params:
--   string_bytes (10240)                  string value above this many bytes (STRLEN): big-string
--   string_critical_bytes (1048576)       string value above this many bytes: big-string-critical
--   collection_length (5000)              collection above this many elements: big-collection
--   collection_critical_length (100000)   collection above this many elements: big-collection-critical
--   collection_memory (52428800)          collection above this many bytes of memory: big-collection-memory
WITH flagged AS (
    -- the same tests as big_keys (a dense HyperLogLog, 12,304 bytes by design, is no big key)
    SELECT dump_id, type, memory_bytes, expire_at_ms, ttl_ms,
           (type = 'string' AND length > $string_bytes AND length <> 12304)
           OR (type IN ('list', 'set', 'zset', 'hash', 'stream')
               AND (length > $collection_length OR memory_bytes > $collection_memory)) AS big,
           (type = 'string' AND length > $string_critical_bytes)
           OR (type IN ('list', 'set', 'zset', 'hash', 'stream')
               AND length > $collection_critical_length) AS critical
    FROM rkeys
), per_dump AS (
    SELECT dump_id,
           count(*) AS keys,
           sum(memory_bytes) AS memory_bytes,
           count(*) FILTER (WHERE big AND critical) AS big_critical,
           coalesce(sum(memory_bytes) FILTER (WHERE big AND critical), 0) AS big_critical_memory_bytes,
           count(*) FILTER (WHERE big AND NOT critical) AS big_other,
           count(*) FILTER (WHERE big AND type = 'string') AS big_strings,
           coalesce(sum(memory_bytes) FILTER (WHERE big AND NOT critical), 0) AS big_other_memory_bytes,
           count(*) - count(expire_at_ms) AS keys_without_ttl,
           coalesce(sum(memory_bytes) FILTER (WHERE expire_at_ms IS NULL), 0) AS memory_without_ttl,
           count(*) FILTER (WHERE ttl_ms <= 0) AS expired_at_snapshot,
           coalesce(sum(memory_bytes) FILTER (WHERE ttl_ms <= 0), 0) AS memory_expired_at_snapshot
    FROM flagged
    GROUP BY dump_id
)
SELECT d.dump_id, d.path, d.server, d.server_version,
       coalesce(p.keys, 0) AS keys,
       coalesce(p.memory_bytes, 0) AS memory_bytes,
       d.complete IS DISTINCT FROM false AS complete,
       d.error_kind, d.checksum,
       coalesce(p.big_critical, 0) AS big_critical,
       coalesce(p.big_critical_memory_bytes, 0) AS big_critical_memory_bytes,
       coalesce(p.big_other, 0) AS big_other,
       coalesce(p.big_other_memory_bytes, 0) AS big_other_memory_bytes,
       coalesce(p.big_strings, 0) AS big_strings,
       coalesce(p.keys_without_ttl, 0) AS keys_without_ttl,
       coalesce(p.memory_without_ttl, 0) AS memory_without_ttl,
       coalesce(p.expired_at_snapshot, 0) AS expired_at_snapshot,
       coalesce(p.memory_expired_at_snapshot, 0) AS memory_expired_at_snapshot
FROM dumps AS d
JOIN rsnap AS s USING (dump_id)
LEFT JOIN per_dump AS p USING (dump_id)
ORDER BY d.dump_id
