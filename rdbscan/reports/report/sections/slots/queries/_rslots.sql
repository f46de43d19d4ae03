-- name: _rslots
-- answers: (base relation, not a report) one row per cluster slot that holds keys of `rkeys`,
--          with the per-slot aggregates that slots, slots_by_memory, slot_summary and hashtags
--          read: one pass over the keys instead of one per query. Created as a TEMP TABLE
--          `rslots` when a query mentions it, with `rhashtags`, one row per (hashtag, slot),
--          made first: the keys with a hashtag per slot are its sums.
-- params: none
-- columns: slot, keys, memory_bytes, keys_with_ttl, hashtag_keys (keys with a usable
--   {hashtag}), largest_memory_bytes. (No largest key: reading every key's name cost most of
--   the slots section on many small keys; slots_by_memory finds that of the slots it lists.)
--   rhashtags: hashtag, slot, keys, memory_bytes, keys_with_ttl.
CREATE OR REPLACE TEMP TABLE rhashtags AS
-- keys with a hashtag only: key_hashtag tests contains(key, '{') before its regex, and the
-- scan skips plain keys (keys.plain_key: no `{`) without reading their names
SELECT key_hashtag(key) AS hashtag, slot, count(*) AS keys, sum(memory_bytes) AS memory_bytes,
       count(expire_at_ms) AS keys_with_ttl
FROM rkeys
WHERE plain_key IS NOT TRUE AND key_hashtag(key) IS NOT NULL
GROUP BY ALL;
CREATE OR REPLACE TEMP TABLE rslots AS
WITH per_slot AS (
    SELECT slot, count(*) AS keys, sum(memory_bytes) AS memory_bytes,
           count(expire_at_ms) AS keys_with_ttl, max(memory_bytes) AS largest_memory_bytes
    FROM rkeys
    GROUP BY slot
), tagged AS (
    -- from rhashtags rather than each key's hashtag worked out again in this scan
    SELECT slot, sum(keys) AS hashtag_keys FROM rhashtags GROUP BY slot
)
SELECT s.slot, s.keys, s.memory_bytes, s.keys_with_ttl,
       coalesce(t.hashtag_keys, 0)::BIGINT AS hashtag_keys, s.largest_memory_bytes
FROM per_slot AS s
LEFT JOIN tagged AS t USING (slot)
