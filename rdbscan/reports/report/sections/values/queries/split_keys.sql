-- name: split_keys
-- answers: Which keys are shards of one logical key split by hand (`video_info#olympic#2020-08-29#1`,
--          `#2`, ...): keys whose last `#` segment is an integer, grouped by the rest of the name
--          (the logical key, across the dumps of a cluster) when it has at least min_shards shards.
--          Per logical key: its family, type, shards, total elements and memory, the largest and the
--          median shard's memory and their ratio (balance: 1 = even shards), the largest shard, and
--          whether the shards together are a big key (over the big-key thresholds of big_keys) that
--          no shard is. Logical keys with the most memory first; every row also carries the totals
--          over all logical keys.
-- by dump: Per dump, what its report alone says of its keys split into `#N` shards: the logical
--          keys it lists (its `top` by memory) with its totals, over that dump's keys (its shards
--          only); for a report over many dumps (values/build.py by_dump).
-- params:
--   min_shards (2)                     a logical key needs this many shards
--   top (20)                           logical keys listed (by dump: per dump)
--   string_bytes (10240)               big-key thresholds, as in big_keys
--   collection_length (5000)           (see big_keys)
--   collection_memory (52428800)       (see big_keys)
WITH shards AS (
    -- the family ends with `#{id}` exactly when the last `#` segment is an integer (`#` bounds
    -- segments in key_pattern); the regex runs on those keys only: inside the CASE, since
    -- DuckDB pushes `logical_key <> ''` into the scan beside the WHERE and would otherwise run
    -- it on every key, in each of the three scans the aggregates below plan
    SELECT /*by dump: dump_id,*/ db, key, type, length, memory_bytes, pattern,
           CASE WHEN ends_with(family, '#{id}') THEN regexp_extract(key, '^(.*)#[0-9]+$', 1) END AS logical_key
    FROM rkeys
    WHERE ends_with(family, '#{id}')
), logical AS (
    SELECT /*by dump: dump_id,*/ db, logical_key,
           mode(pattern) AS pattern,
           mode(type) AS type,
           count(DISTINCT type) AS types,
           count(*) AS shards,
           sum(length) AS length,
           sum(memory_bytes) AS memory_bytes,
           max(memory_bytes) AS largest_shard_bytes,
           quantile_disc(memory_bytes, 0.5) AS median_shard_bytes,
           arg_max(key, (memory_bytes, key)) AS largest_shard,
           max(CASE WHEN type = 'string' THEN length > $string_bytes
                    WHEN type IN ('list', 'set', 'zset', 'hash', 'stream')
                    THEN length > $collection_length OR memory_bytes > $collection_memory
                    ELSE false END) AS big_shard
    FROM shards
    WHERE logical_key <> ''
    GROUP BY /*by dump: dump_id,*/ db, logical_key
    HAVING count(*) >= $min_shards
), flagged AS (
    SELECT *,
           round(largest_shard_bytes / nullif(median_shard_bytes, 0), 2) AS balance,
           NOT big_shard AND types = 1 AND CASE WHEN type = 'string' THEN length > $string_bytes
               WHEN type IN ('list', 'set', 'zset', 'hash', 'stream')
               THEN length > $collection_length OR memory_bytes > $collection_memory
               ELSE false END AS big_when_joined
    FROM logical
)
SELECT /*by dump: dump_id,*/ db, logical_key, pattern, type, types, shards, length, memory_bytes,
       largest_shard_bytes, median_shard_bytes, balance, largest_shard, big_shard, big_when_joined,
       count(*) OVER w AS total_logical_keys,
       sum(shards) OVER w AS total_shards,
       sum(memory_bytes) OVER w AS total_memory_bytes,
       count(CASE WHEN big_when_joined THEN 1 END) OVER w AS total_big_when_joined,
       coalesce(sum(memory_bytes) FILTER (WHERE big_when_joined) OVER w, 0) AS total_big_when_joined_memory
FROM flagged
WINDOW w AS (/*by dump: PARTITION BY dump_id*/)
-- the totals (window functions) are over every logical key, before QUALIFY keeps the top
QUALIFY row_number() OVER (/*by dump: PARTITION BY dump_id*/ ORDER BY memory_bytes DESC, db, logical_key) <= $top
ORDER BY /*by dump: dump_id,*/ memory_bytes DESC, db, logical_key
