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
           -- not a dense HyperLogLog (12,304 bytes by design, as in big_keys)
           type = 'string' AND length > $string_bytes::BIGINT AND length <> 12304 AS big_string,
           type = 'string' AND length > $string_critical_bytes::BIGINT AS big_string_critical,
           type IN ('list', 'set', 'zset', 'hash', 'stream') AND length > $collection_length::BIGINT AS big_collection,
           type IN ('list', 'set', 'zset', 'hash', 'stream') AND length > $collection_critical_length::BIGINT AS big_collection_critical,
           type IN ('list', 'set', 'zset', 'hash', 'stream') AND memory_bytes > $collection_memory::BIGINT AS big_collection_memory
    FROM rkeys
), hits AS (
    -- the keys over some threshold (few), one row per rule they break
    SELECT unnest([CASE WHEN big_string THEN 1 END, CASE WHEN big_string_critical THEN 2 END,
                   CASE WHEN big_collection THEN 3 END, CASE WHEN big_collection_critical THEN 4 END,
                   CASE WHEN big_collection_memory THEN 5 END]) AS ord,
           memory_bytes, expire_at_ms
    FROM flagged
    WHERE big_string OR big_string_critical OR big_collection OR big_collection_critical
          OR big_collection_memory
)
SELECT r.rule, r.severity, r.measure, r.threshold,
       count(h.ord) AS keys,
       coalesce(sum(h.memory_bytes), 0) AS memory_bytes,
       count(h.expire_at_ms) AS keys_with_ttl
FROM rules AS r
LEFT JOIN hits AS h USING (ord)
GROUP BY r.rule, r.severity, r.measure, r.threshold, r.ord
ORDER BY r.ord
