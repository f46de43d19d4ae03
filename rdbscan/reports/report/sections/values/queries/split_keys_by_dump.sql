-- name: split_keys_by_dump
-- answers: Per dump, what its report alone says of its keys split into `#N` shards that are big
--          keys once joined (split_keys, over that dump's keys: its shards only): how many, their
--          memory, and the first of them among the logical keys it lists (its `top` by memory);
--          one GROUP BY dump_id, for a report over many dumps (values/build.py by_dump).
-- params:
--   min_shards (2)                     a logical key needs this many shards
--   top (20)                           logical keys ranked per dump
--   string_bytes (10240)               big-key thresholds, as in big_keys
--   collection_length (5000)           (see big_keys)
--   collection_memory (52428800)       (see big_keys)
WITH shards AS (
    SELECT dump_id, db, key, type, length, memory_bytes,
           regexp_extract(key, '^(.*)#[0-9]+$', 1) AS logical_key
    FROM rkeys
    WHERE ends_with(family, '#{id}')
), logical AS (
    SELECT dump_id, db, logical_key,
           mode(type) AS type,
           count(DISTINCT type) AS types,
           count(*) AS shards,
           sum(length) AS length,
           sum(memory_bytes) AS memory_bytes,
           max(CASE WHEN type = 'string' THEN length > $string_bytes
                    WHEN type IN ('list', 'set', 'zset', 'hash', 'stream')
                    THEN length > $collection_length OR memory_bytes > $collection_memory
                    ELSE false END) AS big_shard
    FROM shards
    WHERE logical_key <> ''
    GROUP BY dump_id, db, logical_key
    HAVING count(*) >= $min_shards
), flagged AS (
    SELECT dump_id, logical_key, shards, length, memory_bytes,
           NOT big_shard AND types = 1 AND CASE WHEN type = 'string' THEN length > $string_bytes
               WHEN type IN ('list', 'set', 'zset', 'hash', 'stream')
               THEN length > $collection_length OR memory_bytes > $collection_memory
               ELSE false END AS big_when_joined,
           row_number() OVER (PARTITION BY dump_id ORDER BY memory_bytes DESC, db, logical_key) AS rn
    FROM logical
)
SELECT dump_id,
       count(*) AS big_when_joined,
       sum(memory_bytes) AS big_when_joined_memory_bytes,
       arg_min({'logical_key': logical_key, 'shards': shards, 'length': length}, rn)
           FILTER (WHERE rn <= $top) AS first
FROM flagged
WHERE big_when_joined
GROUP BY dump_id
ORDER BY dump_id
