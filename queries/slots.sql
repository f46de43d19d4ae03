-- name: slots
-- answers: The hottest cluster hash slots (by keys, then memory), with their share of all keys and
--          the hashtags that pull keys into them. Slots are computed for every dump, so a
--          standalone dump shows how it would spread over a cluster.
-- params:
--   top (10)   slots returned
WITH s AS (
    SELECT slot, count(*) AS keys, sum(memory_bytes) AS memory_bytes, count(expire_at_ms) AS keys_with_ttl,
           count(key_hashtag(key)) AS hashtag_keys
    FROM rkeys GROUP BY slot
), tags AS (
    SELECT slot, list(tag ORDER BY n DESC, tag)[1:3] AS hashtags
    FROM (SELECT slot, key_hashtag(key) AS tag, count(*) AS n FROM rkeys
          WHERE key_hashtag(key) IS NOT NULL GROUP BY ALL)
    GROUP BY slot
)
SELECT s.slot, s.keys, s.memory_bytes, s.keys_with_ttl,
       s.keys / sum(s.keys) OVER () AS key_share,
       s.memory_bytes / nullif(sum(s.memory_bytes) OVER (), 0) AS memory_share,
       s.hashtag_keys, coalesce(t.hashtags, []) AS hashtags
FROM s LEFT JOIN tags AS t USING (slot)
QUALIFY row_number() OVER (ORDER BY s.keys DESC, s.memory_bytes DESC, s.slot) <= $top
ORDER BY s.keys DESC, s.memory_bytes DESC, s.slot
