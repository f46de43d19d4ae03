-- name: hashtags
-- answers: Which {hashtags} pull many keys or much memory into one cluster slot: per tag its slot,
--          keys, memory, and the tag's share of that slot's keys.
-- params:
--   top (10)   hashtags returned, most keys first
WITH t AS (
    SELECT hashtag, slot, keys, memory_bytes, keys_with_ttl FROM rhashtags
), s AS (SELECT slot, keys AS slot_keys FROM rslots)
SELECT t.hashtag, t.slot, t.keys, t.memory_bytes, t.keys_with_ttl, s.slot_keys,
       t.keys / s.slot_keys AS share_of_slot
FROM t JOIN s USING (slot)
ORDER BY t.keys DESC, t.memory_bytes DESC, t.hashtag
LIMIT greatest($top, 0)
