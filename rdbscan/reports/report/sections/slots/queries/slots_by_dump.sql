-- name: slots_by_dump
-- answers: The hottest slot of each dump (by keys, then memory, then number), with its share of
--          the dump's keys and the hashtags that pull keys into it (the three with the most keys
--          there): the first row of `slots` in each dump's report alone, in a report over many
--          dumps (slots/build.py by_dump).
-- params: none
WITH s AS (
    SELECT dump_id, slot, count(*) AS keys, sum(memory_bytes) AS memory_bytes
    FROM rkeys
    GROUP BY dump_id, slot
), hot AS (
    SELECT dump_id, slot, keys, memory_bytes,
           keys / sum(keys) OVER (PARTITION BY dump_id) AS key_share
    FROM s
    QUALIFY row_number() OVER (PARTITION BY dump_id ORDER BY keys DESC, memory_bytes DESC, slot) = 1
), tags AS (
    -- keys with a hashtag in those slots only (a plain key holds no `{`)
    SELECT k.dump_id, key_hashtag(k.key) AS hashtag, count(*) AS keys
    FROM rkeys AS k JOIN hot AS h ON h.dump_id = k.dump_id AND h.slot = k.slot
    WHERE k.plain_key IS NOT TRUE AND key_hashtag(k.key) IS NOT NULL
    GROUP BY ALL
)
SELECT h.dump_id, h.slot, h.keys, h.memory_bytes, h.key_share,
       coalesce((SELECT list(t.hashtag ORDER BY t.keys DESC, t.hashtag) FROM tags AS t
                 WHERE t.dump_id = h.dump_id)[1:3], []) AS hashtags
FROM hot AS h
ORDER BY h.dump_id
