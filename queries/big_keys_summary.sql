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
), hits AS (
    SELECT r.rule, k.memory_bytes, k.expire_at_ms
    FROM rkeys AS k
    JOIN rules AS r ON CASE r.rule
        WHEN 'big-string' THEN k.type = 'string' AND k.length > r.threshold
        WHEN 'big-string-critical' THEN k.type = 'string' AND k.length > r.threshold
        WHEN 'big-collection' THEN k.type IN ('list', 'set', 'zset', 'hash', 'stream') AND k.length > r.threshold
        WHEN 'big-collection-critical' THEN k.type IN ('list', 'set', 'zset', 'hash', 'stream') AND k.length > r.threshold
        ELSE k.type IN ('list', 'set', 'zset', 'hash', 'stream') AND k.memory_bytes > r.threshold END
)
SELECT r.rule, r.severity, r.measure, r.threshold,
       count(h.rule) AS keys,
       coalesce(sum(h.memory_bytes), 0) AS memory_bytes,
       count(h.expire_at_ms) AS keys_with_ttl
FROM rules AS r
LEFT JOIN hits AS h USING (rule)
GROUP BY r.rule, r.severity, r.measure, r.threshold, r.ord
ORDER BY r.ord
