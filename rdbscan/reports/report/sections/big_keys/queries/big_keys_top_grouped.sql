-- name: big_keys_top_grouped
-- answers: The largest keys of each type, ranked by memory and, for collections and streams,
--          separately by length: the rows of big_keys_top, from one scan of the keys (the form
--          `rdbscan report` runs over a Parquet dataset).
-- params:
--   top (10)   keys per type and ranking
-- One scan of the keys, grouped by type: arg_min(row, order, n) keeps the best n rows of each
-- group as it scans (a heap of n per group and thread), so the memory does not grow with the
-- number of keys, files or rankings, where big_keys_top's ORDER BY ... LIMIT per type and
-- ranking reads the keys once per branch and holds a Parquet reader per branch, thread and file.
-- big_keys_top now scans twice (the strings, then the rest), and that still doubles what a
-- dataset needs: over mixed + pop5m as Parquet (6 M keys) it needs 128 MB at 8 threads and
-- 256 MB at 32 where this runs in 64 and 128 (docs/benchmarks.md, "Two forms still").
-- Over a database's table that form is the cheaper one: each branch compares one column and
-- skips what cannot enter its top n, where this builds a row and an order struct per key.
-- The order of a ranking is one ascending struct: memory (or length) descending, then length
-- (or memory) descending with NULLs last, then the key, then the dump and db (the same key in
-- several dumps).
-- Types: the seven of rdbscan/rdb/constants.py TYPE_NAMES, module values of every module
-- type together (one best n of them all, then ranked within each module's own type); no
-- length ranking for strings.
WITH k AS (
    SELECT CASE WHEN rdb_type IN (6, 7) THEN 'module' ELSE type END AS grp, memory_bytes, length,
           {'type': type, 'dump_id': dump_id, 'db': db, 'key': key, 'encoding': encoding, 'length': length,
            'memory_bytes': memory_bytes, 'memory_is_lower_bound': memory_is_lower_bound,
            'has_ttl': expire_at_ms IS NOT NULL} AS row,
           -- NULL lengths last, as in ORDER BY length DESC
           length IS NULL AS no_length, -coalesce(length, 0) AS neg_length
    FROM rkeys
    WHERE type IN ('string', 'list', 'set', 'zset', 'hash', 'stream') OR rdb_type IN (6, 7)
), best AS (
    SELECT grp,
           arg_min(row, {'a': -memory_bytes, 'b': no_length, 'c': neg_length, 'd': row.key,
                         'e': row.dump_id, 'f': row.db}, greatest($top, 1)) AS by_memory,
           arg_min(row, {'a': no_length, 'b': neg_length, 'c': -memory_bytes, 'd': row.key,
                         'e': row.dump_id, 'f': row.db}, greatest($top, 1))
               FILTER (WHERE grp <> 'string') AS by_length
    FROM k
    GROUP BY grp
), kept AS (
    SELECT 'memory' AS ranking, unnest(by_memory) AS r, generate_subscripts(by_memory, 1) AS pos
    FROM best
    UNION ALL
    SELECT 'length' AS ranking, unnest(by_length) AS r, generate_subscripts(by_length, 1) AS pos
    FROM best WHERE by_length IS NOT NULL
)
SELECT ranking, r.type AS type,
       row_number() OVER (PARTITION BY ranking, r.type ORDER BY pos) AS rank,
       r.dump_id, r.db, r.key, r.encoding, r.length, r.memory_bytes, r.memory_is_lower_bound, r.has_ttl
FROM kept
WHERE pos <= $top
ORDER BY ranking DESC, type, rank
