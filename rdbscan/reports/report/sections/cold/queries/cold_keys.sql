-- name: cold_keys
-- answers: The coldest keys: with LRU data, the longest idle (over idle_days first); with LFU data,
--          the lowest counters; ties by memory. Cold keys without TTL are cleanup candidates.
-- params:
--   idle_days (30)     a key idle longer than this many days is cold
--   max_freq (0)       a key whose LFU counter is at most this is cold
--   top (20)           rows returned
--   delimiters (':')   characters that separate key segments (for the family)
-- The family (as rkeys.pattern) is computed for the listed keys only: key_pattern is costly.
SELECT dump_id, db, key, type, memory_bytes, idle_seconds, lfu_freq, cold, has_ttl,
       key_family(key, family, delimiters := $delimiters) AS pattern
FROM (
    SELECT dump_id, db, key, family, type, memory_bytes, idle_seconds, lfu_freq,
           idle_seconds > $idle_days * 86400 OR lfu_freq <= $max_freq AS cold,
           expire_at_ms IS NOT NULL AS has_ttl
    FROM rkeys
    WHERE idle_seconds IS NOT NULL OR lfu_freq IS NOT NULL
    ORDER BY idle_seconds DESC NULLS LAST, lfu_freq ASC NULLS LAST, memory_bytes DESC, key, dump_id, db
    LIMIT $top
)
ORDER BY idle_seconds DESC NULLS LAST, lfu_freq ASC NULLS LAST, memory_bytes DESC, key, dump_id, db
