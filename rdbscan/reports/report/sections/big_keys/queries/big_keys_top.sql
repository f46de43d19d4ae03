-- name: big_keys_top
-- answers: The largest keys of each type, ranked by memory and, for collections and streams,
--          separately by length (element count; a string's memory follows its length).
-- params:
--   top (10)   keys per type and ranking
-- Two scans of the keys. The strings (most keys of most keyspaces) through one ORDER BY ...
-- LIMIT: DuckDB keeps the best N as it scans (a heap, and a filter on the first order column
-- that skips what cannot enter it). The other types, a small share of the keys, grouped by
-- type in one scan: arg_min(row, order, n) keeps the best n rows of each type and ranking (a
-- heap of n per group and thread). An ORDER BY ... LIMIT per type and ranking would scan the
-- keys thirteen times at once, each scan holding its own blocks of every column it reads:
-- more than DuckDB's memory limit for the report's queries, whatever the number of keys.
-- (Over a Parquet dataset `rdbscan report` runs big_keys_top_grouped: one scan for all.)
-- Types: the seven of rdbscan/rdb/constants.py TYPE_NAMES, module values of every module
-- type together (one best N of them all, then ranked within each module's own type); no
-- length ranking for strings. Ties: memory, then length (NULLs last), then the key, then the
-- dump and db (the same key in several dumps): as one ascending struct in arg_min, memory (or
-- length) descending, then length (or memory) descending with NULLs last, then the key, the
-- dump and the db.
WITH strings AS (
    SELECT dump_id, db, key, type, encoding, length, memory_bytes, memory_is_lower_bound,
           expire_at_ms
    FROM rkeys
    WHERE type = 'string'
    ORDER BY memory_bytes DESC, length DESC, key, dump_id, db
    LIMIT greatest($top, 0)
), others AS (
    SELECT CASE WHEN rdb_type IN (6, 7) THEN 'module' ELSE type END AS grp, memory_bytes, length,
           {'type': type, 'dump_id': dump_id, 'db': db, 'key': key, 'encoding': encoding, 'length': length,
            'memory_bytes': memory_bytes, 'memory_is_lower_bound': memory_is_lower_bound,
            'has_ttl': expire_at_ms IS NOT NULL} AS row,
           -- NULL lengths last, as in ORDER BY length DESC
           length IS NULL AS no_length, -coalesce(length, 0) AS neg_length
    FROM rkeys
    -- (rdb_type 0 is a string: a scan filter, which skips the blocks of strings)
    WHERE rdb_type <> 0 AND (type IN ('list', 'set', 'zset', 'hash', 'stream') OR rdb_type IN (6, 7))
), best AS (
    SELECT grp,
           arg_min(row, {'a': -memory_bytes, 'b': no_length, 'c': neg_length, 'd': row.key,
                         'e': row.dump_id, 'f': row.db}, greatest($top, 1)) AS by_memory,
           arg_min(row, {'a': no_length, 'b': neg_length, 'c': -memory_bytes, 'd': row.key,
                         'e': row.dump_id, 'f': row.db}, greatest($top, 1)) AS by_length
    FROM others
    GROUP BY grp
), kept AS (
    SELECT 'memory' AS ranking,
           {'type': type, 'dump_id': dump_id, 'db': db, 'key': key, 'encoding': encoding, 'length': length,
            'memory_bytes': memory_bytes, 'memory_is_lower_bound': memory_is_lower_bound,
            'has_ttl': expire_at_ms IS NOT NULL} AS r,
           row_number() OVER (ORDER BY memory_bytes DESC, length DESC, key, dump_id, db) AS pos
    FROM strings
    UNION ALL
    SELECT 'memory' AS ranking, unnest(by_memory) AS r, generate_subscripts(by_memory, 1) AS pos
    FROM best
    UNION ALL
    SELECT 'length' AS ranking, unnest(by_length) AS r, generate_subscripts(by_length, 1) AS pos
    FROM best
)
SELECT ranking, r.type AS type,
       row_number() OVER (PARTITION BY ranking, r.type ORDER BY pos) AS rank,
       r.dump_id, r.db, r.key, r.encoding, r.length, r.memory_bytes, r.memory_is_lower_bound, r.has_ttl
FROM kept
WHERE pos <= $top
ORDER BY ranking DESC, type, rank
