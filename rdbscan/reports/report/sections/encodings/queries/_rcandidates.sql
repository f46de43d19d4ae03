-- name: _rcandidates
-- answers: (base relation, not a report) every key in a non-compact encoding that fits the
--          compact thresholds of `rlimits` (those of the key's own dump's server), with the compact encoding it would get and its
--          estimated compact size (compact_memory_estimate of the listpack: its exact size for a
--          quicklist (keys.listpack_bytes), else listpack_bytes_estimate). docs/findings.md.
--          Created as a TEMP TABLE `rcandidates` for encoding_candidates and its summary.
-- params:
--   from _rlimits.sql: *
CREATE OR REPLACE TEMP TABLE rcandidates AS
SELECT k.dump_id, k.db, k.key, k.type, k.encoding,
       -- a hash with field TTLs: the server's own encoding for it (Redis 7.4+: listpackex)
       CASE WHEN k.fields_with_ttl > 0 THEN l.hash_field_ttl_encoding ELSE l.target_encoding END AS target_encoding,
       k.length, k.max_elem_bytes, k.memory_bytes,
       compact_memory_estimate(k.key_length,
           CASE WHEN l.target_encoding = 'intset'
                -- 8-byte header + members at the width the widest member needs (by its digits)
                THEN 8 + k.length * CASE WHEN k.max_elem_bytes <= 4 THEN 2 WHEN k.max_elem_bytes <= 9 THEN 4 ELSE 8 END
                ELSE coalesce(k.listpack_bytes,
                              listpack_bytes_estimate(k.type, k.length, k.max_elem_bytes, k.value_serialized_bytes))
           END) AS estimated_bytes
FROM rkeys AS k
JOIN rlimits AS l ON k.dump_id = l.dump_id AND k.type = l.type AND k.encoding = l.from_encoding
-- rdb_type 0 (RDB_TYPE_STRING) is a string, which no compact encoding concerns: a test of the
-- stored byte, pushed into the scan, spares most keys of a keyspace of small strings the type and
-- encoding names the view works out per key (a module's type name has 9 characters, never 'string')
WHERE k.rdb_type <> 0 AND l.max_entries > 0
  -- a server without a compact encoding for field TTLs (Valkey, Redis before 7.4) keeps such a
  -- hash a hashtable: nothing to rewrite
  AND (coalesce(k.fields_with_ttl, 0) = 0 OR l.hash_field_ttl_encoding IS NOT NULL)
  AND k.length <= l.max_entries
  AND k.max_elem_bytes <= l.max_value
  AND (l.target_encoding <> 'intset' OR k.int_members = k.length)
  -- a multi-node quicklist: the exact bytes of its entries as one listpack (uncompressed; the
  -- serialized size counts LZF-compressed nodes); NULL only in databases of older loaders
  AND (l.max_lp_bytes IS NULL
       OR coalesce(k.listpack_bytes, listpack_bytes_estimate(k.type, k.length, k.max_elem_bytes,
                                                             k.value_serialized_bytes)) <= l.max_lp_bytes)
-- a set of integers becomes an intset, not a listpack
QUALIFY row_number() OVER (PARTITION BY k.dump_id, k.db, k.key
                           ORDER BY l.target_encoding = 'intset' DESC) = 1;
