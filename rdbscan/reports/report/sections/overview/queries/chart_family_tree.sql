-- name: chart_family_tree
-- answers: The key families as a tree of prefixes (`user` -> `user:{id}` -> `user:{id}:profile`),
--          for the HTML report's drill-down treemap: per node its parent, keys, memory and keys
--          with TTL. Each node keeps its `children` largest children by memory; the others fold into
--          one `(other)` child, so the tree stays small whatever the keyspace.
-- params:
--   children (12)     children kept per node before the rest folds into (other)
--   delimiters (':')  characters that separate segments
WITH f AS (
    SELECT pattern, keys, memory_bytes, keys_with_ttl,
           regexp_extract_all(pattern, '[^' || delim_class($delimiters) || ']*[' || delim_class($delimiters) || ']') AS pieces
    FROM rfamilies
), levels AS (
    -- depth d of a family: its first d pieces without the last delimiter; its whole name at the
    -- level after its last piece; families deeper than 3 levels are counted at their third
    SELECT d.depth,
           CASE WHEN len(f.pieces) >= d.depth THEN left(array_to_string(f.pieces[1:d.depth], ''), -1)
                ELSE f.pattern END AS prefix,
           CASE WHEN d.depth = 1 THEN NULL
                ELSE left(array_to_string(f.pieces[1:d.depth - 1], ''), -1) END AS parent,
           f.keys, f.memory_bytes, f.keys_with_ttl
    FROM f CROSS JOIN (SELECT range::INTEGER AS depth FROM range(1, 4)) AS d
    WHERE d.depth <= len(f.pieces) + 1
), nodes AS (
    SELECT depth, prefix, parent, sum(keys) AS keys, sum(memory_bytes) AS memory_bytes,
           sum(keys_with_ttl) AS keys_with_ttl
    FROM levels GROUP BY ALL
), ranked AS (
    SELECT *, row_number() OVER (PARTITION BY depth, parent ORDER BY memory_bytes DESC, keys DESC, prefix) AS rn
    FROM nodes
), kept1 AS (
    SELECT * FROM ranked WHERE depth = 1 AND rn <= $children
), kept2 AS (
    SELECT r.* FROM ranked AS r JOIN kept1 AS p ON r.parent = p.prefix
    WHERE r.depth = 2 AND r.rn <= $children AND r.prefix <> p.prefix
), kept3 AS (
    SELECT r.* FROM ranked AS r JOIN kept2 AS p ON r.parent = p.prefix
    WHERE r.depth = 3 AND r.rn <= $children AND r.prefix <> p.prefix
), kept AS (
    SELECT depth, prefix, parent, keys, memory_bytes, keys_with_ttl FROM kept1
    UNION ALL SELECT depth, prefix, parent, keys, memory_bytes, keys_with_ttl FROM kept2
    UNION ALL SELECT depth, prefix, parent, keys, memory_bytes, keys_with_ttl FROM kept3
), other AS (
    -- what a kept parent (or the root) holds beyond its kept children
    SELECT p.depth + 1 AS depth, '(other)' AS prefix, p.prefix AS parent,
           p.keys - coalesce(sum(c.keys), 0) AS keys,
           p.memory_bytes - coalesce(sum(c.memory_bytes), 0) AS memory_bytes,
           p.keys_with_ttl - coalesce(sum(c.keys_with_ttl), 0) AS keys_with_ttl
    FROM kept AS p LEFT JOIN kept AS c ON c.parent = p.prefix AND c.depth = p.depth + 1
    WHERE p.depth < 3 AND EXISTS (SELECT 1 FROM nodes AS n WHERE n.parent = p.prefix AND n.depth = p.depth + 1
                                  AND n.prefix <> p.prefix)
    GROUP BY p.depth, p.prefix, p.keys, p.memory_bytes, p.keys_with_ttl
    UNION ALL
    SELECT 1, '(other)', NULL, sum(keys), sum(memory_bytes), sum(keys_with_ttl)
    FROM ranked WHERE depth = 1 AND rn > $children
    HAVING count(*) > 0
)
SELECT depth, prefix, parent, keys, memory_bytes, keys_with_ttl FROM kept
UNION ALL
SELECT depth, prefix, parent, keys, memory_bytes, keys_with_ttl FROM other WHERE keys > 0
ORDER BY depth, parent NULLS FIRST, memory_bytes DESC, prefix
