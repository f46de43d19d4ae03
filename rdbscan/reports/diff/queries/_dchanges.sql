-- name: _dchanges
-- answers: (base relation, not a diff part) the keys that differ between the snapshots, matched
--          by db and key name (the raw bytes for names that are not UTF-8): `added` (only in the
--          new snapshot), `removed` (only in the old one) and `changed` (in both, with another
--          type, encoding, length, largest element, serialized size, memory or expiry time).
--          Unchanged keys are left out, so the table is as small as the change. A value rewritten
--          with the same size, encoding and expiry does not show: a dump's rows hold no digest of
--          the value.
--          Two steps, so that no hash table holds the whole keyspace with its names and columns:
--          `dcandidates` groups both sides by a 64-bit hash of (db, key) and keeps the hashes not
--          held exactly once by each side, or whose hash of the compared columns differs; then
--          the rows of those keys alone are matched by name and compared column by column. A
--          change is missed only when a removed and an added key share both hashes (odds about
--          removed x added / 2^64). A GROUP BY, not a FULL OUTER JOIN of the two sides: DuckDB
--          spills the aggregate within its memory limit, where the join of two 20 M-key sides
--          failed at 128 MB in 2 runs of 7 (docs/diff.md, "Scale").
-- params: none
-- columns: change, db, key, pattern, then old_ and new_ type, encoding, length, max_elem_bytes,
--   memory_bytes, expire_at_ms, ttl_ms, int_members (NULL on the side that does not hold the key)
CREATE OR REPLACE TEMP TABLE dcandidates AS
WITH s AS (
    SELECT side, hash(db, key, key_raw) AS hk,
           -- rdb_type, not the type and encoding names the view computes: a collection's
           -- encoding is its RDB type, a string's shows in its serialized size
           hash(rdb_type, length, max_elem_bytes, serialized_bytes, memory_bytes, expire_at_ms) AS fp
    FROM dsrc
)
SELECT hk
FROM s
GROUP BY hk
HAVING count(*) FILTER (WHERE side = 'old') <> 1
    OR count(*) FILTER (WHERE side = 'new') <> 1
    OR min(fp) <> max(fp);

CREATE OR REPLACE TEMP TABLE dchanges AS
WITH o AS (
    SELECT k.* FROM dkeys AS k
    SEMI JOIN dcandidates AS c ON hash(k.db, k.key, k.key_raw) = c.hk
    WHERE k.side = 'old'
), n AS (
    SELECT k.* FROM dkeys AS k
    SEMI JOIN dcandidates AS c ON hash(k.db, k.key, k.key_raw) = c.hk
    WHERE k.side = 'new'
)
SELECT CASE WHEN o.key IS NULL THEN 'added' WHEN n.key IS NULL THEN 'removed' ELSE 'changed' END AS change,
       coalesce(n.db, o.db) AS db,
       coalesce(n.key, o.key) AS key,
       coalesce(n.pattern, o.pattern) AS pattern,
       o.type AS old_type, n.type AS new_type,
       o.encoding AS old_encoding, n.encoding AS new_encoding,
       o.length AS old_length, n.length AS new_length,
       o.max_elem_bytes AS old_max_elem_bytes, n.max_elem_bytes AS new_max_elem_bytes,
       o.memory_bytes AS old_memory_bytes, n.memory_bytes AS new_memory_bytes,
       o.expire_at_ms AS old_expire_at_ms, n.expire_at_ms AS new_expire_at_ms,
       o.ttl_ms AS old_ttl_ms, n.ttl_ms AS new_ttl_ms,
       o.int_members AS old_int_members, n.int_members AS new_int_members
FROM o FULL OUTER JOIN n
  ON o.db = n.db AND o.key = n.key AND o.key_raw IS NOT DISTINCT FROM n.key_raw
WHERE o.key IS NULL OR n.key IS NULL
   OR o.type IS DISTINCT FROM n.type
   OR o.encoding IS DISTINCT FROM n.encoding
   OR o.length IS DISTINCT FROM n.length
   OR o.max_elem_bytes IS DISTINCT FROM n.max_elem_bytes
   OR o.serialized_bytes IS DISTINCT FROM n.serialized_bytes
   OR o.memory_bytes IS DISTINCT FROM n.memory_bytes
   OR o.expire_at_ms IS DISTINCT FROM n.expire_at_ms
