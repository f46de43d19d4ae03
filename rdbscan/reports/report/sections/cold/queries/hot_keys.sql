-- name: hot_keys
-- answers: The hottest keys by LFU counter (dumps written under an LFU maxmemory-policy), the
--          counterpart of cold_keys: the keys most read and written lately, highest counter first,
--          ties by memory. A hot key is served by one thread of one node: cache it client-side,
--          replicate it, or split it. Empty when the dump has no LFU counters.
-- params:
--   top (20)           rows returned
--   delimiters (':')   characters that separate key segments (for the family)
-- The family (as rkeys.pattern) is computed for the listed keys only.
SELECT dump_id, db, key, type, memory_bytes, lfu_freq, expire_at_ms IS NOT NULL AS has_ttl,
       key_family(key, family, delimiters := $delimiters) AS pattern
FROM (
    SELECT dump_id, db, key, family, type, memory_bytes, lfu_freq, expire_at_ms
    FROM rkeys
    WHERE lfu_freq IS NOT NULL
    ORDER BY lfu_freq DESC, memory_bytes DESC, key, dump_id, db
    LIMIT $top
)
ORDER BY lfu_freq DESC, memory_bytes DESC, key, dump_id, db
