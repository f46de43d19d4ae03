-- name: chart_family_tree
-- answers: The key families as a tree of prefixes (`user` -> `user:{id}` -> `user:{id}:profile`),
--          for the HTML report's drill-down treemap: per node its parent, keys, memory and keys
--          with TTL. Each node keeps its `children` largest children by memory; the others fold into
--          one `(other)` child, so the tree stays small whatever the keyspace.
-- params:
--   children (12)     children kept per node before the rest folds into (other)
--   delimiters (':')  characters that separate segments
--
-- Level by level, each level's nodes only under the parents kept at the level before, each parent's
-- top children from a heap (rtop_prefixes, _rfamilies.sql: memory, keys, then name, as a
-- row_number() ordering would): a window over every node held a
-- copy of them all, four million over two million one-key families (`ratelimit:10.1.2.3`), and
-- ran out of memory at 128 MB.
WITH f AS (
    SELECT pattern, keys, memory_bytes, keys_with_ttl,
           regexp_extract_all(pattern, '[^' || delim_class($delimiters) || ']*[' || delim_class($delimiters) || ']') AS pieces
    FROM rfamilies
), levels AS NOT MATERIALIZED (
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
), nodes1 AS (
    SELECT 1 AS depth, prefix, parent, sum(keys) AS keys, sum(memory_bytes) AS memory_bytes,
           sum(keys_with_ttl) AS keys_with_ttl
    FROM levels WHERE depth = 1 GROUP BY prefix, parent
), kept1 AS (
    SELECT * FROM nodes1
    WHERE prefix IN (SELECT unnest(rtop_prefixes(prefix, memory_bytes, keys, $children))
                     FROM nodes1 HAVING $children > 0)
), nodes2 AS (
    SELECT 2 AS depth, prefix, parent, sum(keys) AS keys, sum(memory_bytes) AS memory_bytes,
           sum(keys_with_ttl) AS keys_with_ttl
    FROM levels WHERE depth = 2 AND parent IN (SELECT prefix FROM kept1) GROUP BY prefix, parent
), kept2 AS (
    SELECT n.* FROM nodes2 AS n
    JOIN (SELECT parent, unnest(rtop_prefixes(prefix, memory_bytes, keys, $children)) AS prefix
          FROM nodes2 WHERE $children > 0 GROUP BY parent) AS t USING (parent, prefix)
    WHERE n.prefix <> n.parent
), nodes3 AS (
    SELECT 3 AS depth, prefix, parent, sum(keys) AS keys, sum(memory_bytes) AS memory_bytes,
           sum(keys_with_ttl) AS keys_with_ttl
    FROM levels WHERE depth = 3 AND parent IN (SELECT prefix FROM kept2) GROUP BY prefix, parent
), kept3 AS (
    SELECT n.* FROM nodes3 AS n
    JOIN (SELECT parent, unnest(rtop_prefixes(prefix, memory_bytes, keys, $children)) AS prefix
          FROM nodes3 WHERE $children > 0 GROUP BY parent) AS t USING (parent, prefix)
    WHERE n.prefix <> n.parent
), kept AS (
    SELECT depth, prefix, parent, keys, memory_bytes, keys_with_ttl FROM kept1
    UNION ALL SELECT depth, prefix, parent, keys, memory_bytes, keys_with_ttl FROM kept2
    UNION ALL SELECT depth, prefix, parent, keys, memory_bytes, keys_with_ttl FROM kept3
), with_children AS (
    -- the kept parents with a child other than themselves
    SELECT DISTINCT depth - 1 AS depth, parent AS prefix FROM nodes2 WHERE prefix <> parent
    UNION ALL
    SELECT DISTINCT depth - 1 AS depth, parent AS prefix FROM nodes3 WHERE prefix <> parent
), other AS (
    -- what a kept parent (or the root) holds beyond its kept children
    SELECT p.depth + 1 AS depth, '(other)' AS prefix, p.prefix AS parent,
           p.keys - coalesce(sum(c.keys), 0) AS keys,
           p.memory_bytes - coalesce(sum(c.memory_bytes), 0) AS memory_bytes,
           p.keys_with_ttl - coalesce(sum(c.keys_with_ttl), 0) AS keys_with_ttl
    FROM kept AS p SEMI JOIN with_children AS w USING (depth, prefix)
    LEFT JOIN kept AS c ON c.parent = p.prefix AND c.depth = p.depth + 1
    WHERE p.depth < 3
    GROUP BY p.depth, p.prefix, p.keys, p.memory_bytes, p.keys_with_ttl
    UNION ALL
    SELECT 1, '(other)', NULL, sum(keys), sum(memory_bytes), sum(keys_with_ttl)
    FROM nodes1 WHERE prefix NOT IN (SELECT prefix FROM kept1)
    HAVING count(*) > 0
)
SELECT depth, prefix, parent, keys, memory_bytes, keys_with_ttl FROM kept
UNION ALL
SELECT depth, prefix, parent, keys, memory_bytes, keys_with_ttl FROM other WHERE keys > 0
ORDER BY depth, parent NULLS FIRST, memory_bytes DESC, prefix
