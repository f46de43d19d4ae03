-- name: slots
-- answers: The hottest cluster hash slots (by keys, then memory), with their share of all keys and
--          the hashtags that pull keys into them. Slots are computed for every dump, so a
--          standalone dump shows how it would spread over a cluster.
-- params:
--   top (10)   slots returned
WITH s AS (
    SELECT slot, keys, memory_bytes, keys_with_ttl, hashtag_keys FROM rslots
), tags AS (
    SELECT slot, list(hashtag ORDER BY keys DESC, hashtag)[1:3] AS hashtags
    FROM rhashtags
    GROUP BY slot
)
SELECT s.slot, s.keys, s.memory_bytes, s.keys_with_ttl,
       s.keys / sum(s.keys) OVER () AS key_share,
       s.memory_bytes / nullif(sum(s.memory_bytes) OVER (), 0) AS memory_share,
       s.hashtag_keys, coalesce(t.hashtags, []) AS hashtags
FROM s LEFT JOIN tags AS t USING (slot)
QUALIFY row_number() OVER (ORDER BY s.keys DESC, s.memory_bytes DESC, s.slot) <= $top
ORDER BY s.keys DESC, s.memory_bytes DESC, s.slot
