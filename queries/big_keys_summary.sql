-- name: big_keys_summary
-- answers: How many keys (and how much memory) are over each big-key threshold, and how many of
--          those carry a TTL.
-- params:
--   string_bytes (10240)                  string value above this many bytes (STRLEN): big-string
--   string_critical_bytes (1048576)       string value above this many bytes: big-string-critical
--   collection_length (5000)              collection above this many elements: big-collection
--   collection_critical_length (100000)   collection above this many elements: big-collection-critical
--   collection_memory (52428800)          collection above this many bytes of memory: big-collection-memory
WITH rules(rule, severity, measure, threshold, ord) AS (
    VALUES ('big-string', 'warning', 'bytes', $string_bytes::BIGINT, 1),
           ('big-string-critical', 'critical', 'bytes', $string_critical_bytes::BIGINT, 2),
           ('big-collection', 'warning', 'elements', $collection_length::BIGINT, 3),
           ('big-collection-critical', 'critical', 'elements', $collection_critical_length::BIGINT, 4),
           ('big-collection-memory', 'warning', 'memory bytes', $collection_memory::BIGINT, 5)
), flagged AS (
    -- each threshold test once per key
    SELECT memory_bytes, expire_at_ms,
           type = 'string' AND length > $string_bytes::BIGINT AS big_string,
           type = 'string' AND length > $string_critical_bytes::BIGINT AS big_string_critical,
           type IN ('list', 'set', 'zset', 'hash', 'stream') AND length > $collection_length::BIGINT AS big_collection,
           type IN ('list', 'set', 'zset', 'hash', 'stream') AND length > $collection_critical_length::BIGINT AS big_collection_critical,
           type IN ('list', 'set', 'zset', 'hash', 'stream') AND memory_bytes > $collection_memory::BIGINT AS big_collection_memory
    FROM rkeys
), hits AS (
    -- one scan, one row: per rule its keys, memory and keys with a TTL
    SELECT count(*) FILTER (WHERE big_string) AS k1,
           sum(memory_bytes) FILTER (WHERE big_string) AS m1,
           count(expire_at_ms) FILTER (WHERE big_string) AS t1,
           count(*) FILTER (WHERE big_string_critical) AS k2,
           sum(memory_bytes) FILTER (WHERE big_string_critical) AS m2,
           count(expire_at_ms) FILTER (WHERE big_string_critical) AS t2,
           count(*) FILTER (WHERE big_collection) AS k3,
           sum(memory_bytes) FILTER (WHERE big_collection) AS m3,
           count(expire_at_ms) FILTER (WHERE big_collection) AS t3,
           count(*) FILTER (WHERE big_collection_critical) AS k4,
           sum(memory_bytes) FILTER (WHERE big_collection_critical) AS m4,
           count(expire_at_ms) FILTER (WHERE big_collection_critical) AS t4,
           count(*) FILTER (WHERE big_collection_memory) AS k5,
           sum(memory_bytes) FILTER (WHERE big_collection_memory) AS m5,
           count(expire_at_ms) FILTER (WHERE big_collection_memory) AS t5
    FROM flagged
)
SELECT r.rule, r.severity, r.measure, r.threshold,
       [h.k1, h.k2, h.k3, h.k4, h.k5][r.ord] AS keys,
       coalesce([h.m1, h.m2, h.m3, h.m4, h.m5][r.ord], 0) AS memory_bytes,
       [h.t1, h.t2, h.t3, h.t4, h.t5][r.ord] AS keys_with_ttl
FROM rules AS r CROSS JOIN hits AS h
ORDER BY r.ord
