-- name: big_keys_top
-- answers: The largest keys of each type, ranked by memory and, for collections and streams,
--          separately by length (element count; a string's memory follows its length).
-- params:
--   top (10)   keys per type and ranking
-- One ORDER BY ... LIMIT per type and ranking: DuckDB keeps the best N of each as it scans
-- (a heap, and a filter on the first order column that skips what cannot enter it), where a
-- ranking partitioned by type would sort every key. Each branch is a scan of its own, and over
-- a Parquet dataset each holds a reader per file and thread: `rdbscan report` runs
-- big_keys_top_grouped there (the same rows from one grouped scan).
-- Types: the seven of rdbscan/rdb/constants.py TYPE_NAMES, module values of every module
-- type together (one best N of them all, then ranked within each module's own type); no
-- length ranking for strings. Ties: memory, then length (NULLs last), then the key, then the
-- dump and db (the same key in several dumps).
WITH k AS NOT MATERIALIZED (
    SELECT dump_id, db, key, type, encoding, rdb_type, length, memory_bytes, memory_is_lower_bound,
           expire_at_ms FROM rkeys
), best AS (
    (SELECT 'memory' AS ranking, * FROM k WHERE type = 'string' ORDER BY memory_bytes DESC, length DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'memory' AS ranking, * FROM k WHERE type = 'list' ORDER BY memory_bytes DESC, length DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'memory' AS ranking, * FROM k WHERE type = 'set' ORDER BY memory_bytes DESC, length DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'memory' AS ranking, * FROM k WHERE type = 'zset' ORDER BY memory_bytes DESC, length DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'memory' AS ranking, * FROM k WHERE type = 'hash' ORDER BY memory_bytes DESC, length DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'memory' AS ranking, * FROM k WHERE type = 'stream' ORDER BY memory_bytes DESC, length DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'memory' AS ranking, * FROM k WHERE rdb_type IN (6, 7) ORDER BY memory_bytes DESC, length DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'length' AS ranking, * FROM k WHERE type = 'list' ORDER BY length DESC, memory_bytes DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'length' AS ranking, * FROM k WHERE type = 'set' ORDER BY length DESC, memory_bytes DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'length' AS ranking, * FROM k WHERE type = 'zset' ORDER BY length DESC, memory_bytes DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'length' AS ranking, * FROM k WHERE type = 'hash' ORDER BY length DESC, memory_bytes DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'length' AS ranking, * FROM k WHERE type = 'stream' ORDER BY length DESC, memory_bytes DESC, key, dump_id, db LIMIT greatest($top, 0))
    UNION ALL (SELECT 'length' AS ranking, * FROM k WHERE rdb_type IN (6, 7) ORDER BY length DESC, memory_bytes DESC, key, dump_id, db LIMIT greatest($top, 0))
)
SELECT ranking, type, rank, dump_id, db, key, encoding, length, memory_bytes, memory_is_lower_bound,
       expire_at_ms IS NOT NULL AS has_ttl
FROM (SELECT *, row_number() OVER (PARTITION BY ranking, type ORDER BY
                    CASE WHEN ranking = 'memory' THEN memory_bytes ELSE length END DESC,
                    CASE WHEN ranking = 'memory' THEN length ELSE memory_bytes END DESC, key, dump_id, db) AS rank
      FROM best)
ORDER BY ranking DESC, type, rank
