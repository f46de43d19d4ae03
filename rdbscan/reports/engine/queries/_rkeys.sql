-- name: _rkeys
-- answers: (base relation, not a report) the keys of the selected dumps with derived columns. Every
--          other query reads `rkeys`; `rdbscan report` and `rdbscan query` create it as a TEMP VIEW
--          right after `rsnap` (dump_id, snapshot_ms, snapshot_source). A view, not a table: each
--          query reads from disk only the columns it uses and computes only the derived columns it
--          uses (pattern only for the rows that reach it), and the keyspace is never copied into
--          memory. The parameters are written into the view as literals (querylib.prepare).
--          Queries needing `pattern` for every key read the family aggregates in `rfamilies`.
-- params:
--   dump_id (0)       only this dump; 0 = every dump in the database
--   delimiters (':')  characters that separate key segments (for `pattern`)
--   first_dump (0)        the first dump the report covers (relations.prepare, from rsnap)
--   snapshot_times ([0])  snapshot_ms of dumps first_dump, first_dump + 1, ...: NULL for a dump
--                         between them that the report does not cover
-- columns added to `keys`: pattern (key_pattern), snapshot_ms (aux ctime of the dump, in ms),
--   ttl_ms (expire_at_ms - snapshot_ms, NULL without TTL), invalid_utf8 (key bytes are not UTF-8),
--   value_serialized_bytes (serialized_bytes minus the type byte and the key: about the value's RDB size).
--   memory_bytes is never NULL here (0 when the loader could not estimate it); key_bytes and key_raw are dropped.
CREATE OR REPLACE TEMP VIEW rkeys AS
SELECT k.dump_id, k.db, k.key, k.key_length, k.family, k.plain_key, k.type, k.encoding, k.rdb_type, k.length,
       k.max_elem_bytes, k.serialized_bytes,
       greatest(k.serialized_bytes - k.key_length - 2, 0) AS value_serialized_bytes,
       coalesce(k.memory_bytes, 0) AS memory_bytes,
       k.memory_total_bytes, k.expire_at_ms, k.idle_seconds, k.lfu_freq, k.slot,
       k.fields_with_ttl, k.min_field_expire_ms, k.int_members, k.memory_is_lower_bound, k.listpack_bytes,
       key_family(k.key, k.family, delimiters := $delimiters) AS pattern,
       $snapshot_times[k.dump_id - $first_dump + 1] AS snapshot_ms,
       k.expire_at_ms - $snapshot_times[k.dump_id - $first_dump + 1] AS ttl_ms,
       k.key_raw IS NOT NULL AS invalid_utf8
FROM keys AS k
WHERE ($dump_id = 0 OR k.dump_id = $dump_id)
  AND k.dump_id BETWEEN $first_dump AND $first_dump + len($snapshot_times) - 1
  AND $snapshot_times[k.dump_id - $first_dump + 1] IS NOT NULL
