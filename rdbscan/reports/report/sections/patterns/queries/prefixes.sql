-- name: prefixes
-- answers: How memory rolls up by key prefix at depth 1, 2, ... (prefixes of the family names, so
--          `user:{id}` is one prefix at depth 2). Keys with fewer segments count under their whole
--          family name. Each depth lists its top N prefixes and folds the rest into `(other)`.
-- params:
--   max_depth (3)      deepest prefix level
--   top (10)           prefixes per depth before the rest folds into (other); 0 = all
--   delimiters (':')   characters that separate segments
WITH depths AS (
    SELECT range::INTEGER AS depth FROM range(1, $max_depth + 1)
), f AS (
    -- one row per family, with its `segment + delimiter` pieces (as key_prefix splits it)
    SELECT pattern, keys, memory_bytes, keys_with_ttl,
           regexp_extract_all(pattern, '[^' || delim_class($delimiters) || ']*[' || delim_class($delimiters) || ']') AS pieces
    FROM rfamilies
), inner_prefixes AS (
    -- prefix = key_prefix(pattern, depth, delimiters), from the pieces split once per family
    -- rather than twice per family and depth: at a depth the family has pieces for, its first
    -- `depth` pieces without the last delimiter, summed over the families that share it
    SELECT d.depth, left(array_to_string(f.pieces[1:d.depth], ''), -1) AS prefix,
           sum(f.keys) AS keys, sum(f.memory_bytes) AS memory_bytes, sum(f.keys_with_ttl) AS keys_with_ttl
    FROM f JOIN depths AS d ON len(f.pieces) >= d.depth
    GROUP BY d.depth, prefix
), whole AS (
    -- at a deeper depth, the family's whole name: one row per family (rfamilies holds each name
    -- once), no grouping: over two million one-key families (`user:name_1`) this query took
    -- 2.07 s with these rows grouped with the others, 1.30 s without
    SELECT d.depth, f.pattern AS prefix, f.keys, f.memory_bytes, f.keys_with_ttl
    FROM f JOIN depths AS d ON len(f.pieces) < d.depth
), p AS (
    -- a whole name that is also a shorter family's prefix at that depth (`user:{id}` beside
    -- `user:{id}:profile`) is one row of both
    SELECT depth, prefix,
           coalesce(i.keys, 0) + coalesce(w.keys, 0) AS keys,
           coalesce(i.memory_bytes, 0) + coalesce(w.memory_bytes, 0) AS memory_bytes,
           coalesce(i.keys_with_ttl, 0) + coalesce(w.keys_with_ttl, 0) AS keys_with_ttl
    FROM inner_prefixes AS i FULL JOIN whole AS w USING (depth, prefix)
), listed AS (
    -- each depth's top N prefixes by memory, keys, then name: a heap of N per depth
    -- (rtop_prefixes, _rfamilies.sql), not a row_number() window, which sorted every prefix: four
    -- million of them over two million one-key families (`ratelimit:10.1.2.3`)
    SELECT depth, unnest(rtop_prefixes(prefix, memory_bytes, keys, $top)) AS prefix, true AS listed
    FROM p
    GROUP BY depth
), ranked AS (
    SELECT p.*, l.listed FROM p LEFT JOIN listed AS l USING (depth, prefix)
)
SELECT depth, rolled AS prefix, prefixes, keys, memory_bytes, memory_share, ttl_share FROM (
SELECT depth,
       CASE WHEN $top = 0 OR listed THEN prefix ELSE '(other)' END AS rolled,
       count(*) AS prefixes,
       sum(keys) AS keys,
       sum(memory_bytes) AS memory_bytes,
       sum(memory_bytes) / nullif(sum(sum(memory_bytes)) OVER (PARTITION BY depth), 0) AS memory_share,
       sum(keys_with_ttl) / sum(keys) AS ttl_share
FROM ranked
GROUP BY depth, rolled
ORDER BY depth, rolled = '(other)', memory_bytes DESC, rolled
)
ORDER BY depth, prefix = '(other)', memory_bytes DESC, prefix
