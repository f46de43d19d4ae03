-- name: _rfamilies
-- answers: (base relation, not a report) one row per key family (`pattern`) of `rkeys`, with the
--          per-family aggregates that patterns, prefixes and ttl_families read. key_pattern is the
--          costly part of those queries: computed here, once per key, into a TEMP TABLE as small
--          as the number of families, instead of once per query. Created when a query mentions
--          `rfamilies`.
-- params: none
-- columns: pattern, keys, memory_bytes, keys_with_ttl, types (distinct, sorted), largest_key and
--   largest_memory_bytes (the key with the most memory_bytes, the first in byte order on a tie),
--   largest_key_has_ttl, memory_without_ttl (NULL when every key has a TTL).
--
-- One GROUP BY, one aggregate state per family that is not a number (the largest key): a keyspace
-- can hold as many families as keys (`ratelimit:10.1.2.3`, e-mail addresses), and DuckDB spills
-- no aggregate whose result is a string chosen by another value, nor a DISTINCT list or a median.
-- Grouping per family, type and TTL first, then per family (with the largest key without TTL and
-- the median TTL) made a report over a million such families run out of memory; this one runs in
-- the report's retries, at 80 MB or 96 MB (connections.GROWN_MEMORY_LIMITS: its string states,
-- which stay in memory, need about 80 MB at two threads over two million families), over two
-- million (4 CPU s) and over five million under `--delimiters /` (docs/benchmarks.md). ttl_families takes the median TTL and the largest key without TTL from
-- the keys of the families it lists.
-- largest: min() of a struct orders by its fields, so the most memory, then the key in byte
-- order: arg_min(key, (-memory_bytes, key)), with whether that key has a TTL.
-- types: a bit per type (a DISTINCT list is a second grouping over a copy of every key); a module's
-- type name (`vectorset`...) from the module keys alone (rdb_type 6 and 7: RDB_TYPE_MODULE and
-- _MODULE_2, the only keys whose type is none of the names below; tests/test_report_fastpaths.py
-- checks the names against constants.TYPE_NAMES).
-- the top `n` prefixes (of each parent, of each depth) by memory, keys, then name, for the
-- queries that roll rfamilies up by prefix (prefixes, chart_family_tree): a heap (min() of a struct
-- orders by its fields), not a row_number() window, which sorted every prefix
CREATE OR REPLACE TEMP MACRO rtop_prefixes(prefix, memory_bytes, keys, n) AS
    arg_min(prefix, {'memory': -memory_bytes, 'keys': -keys, 'prefix': prefix}, greatest(n, 1));
CREATE OR REPLACE TEMP TABLE rfamilies AS
WITH f AS (
    SELECT pattern,
           count(*)::BIGINT AS keys,
           sum(memory_bytes) AS memory_bytes,
           count(expire_at_ms)::BIGINT AS keys_with_ttl,
           bit_or(CASE type WHEN 'array' THEN 1 WHEN 'hash' THEN 2 WHEN 'list' THEN 4 WHEN 'set' THEN 8
                            WHEN 'stream' THEN 16 WHEN 'string' THEN 32 WHEN 'zset' THEN 64
                            ELSE 0 END) AS type_bits,
           max(memory_bytes) AS largest_memory_bytes,
           min({'memory': -memory_bytes, 'key': key, 'ttl': expire_at_ms IS NOT NULL}) AS largest,
           sum(memory_bytes) FILTER (WHERE expire_at_ms IS NULL) AS memory_without_ttl
    FROM rkeys
    GROUP BY pattern
), module_types AS (
    SELECT pattern, list(DISTINCT type) AS types
    FROM rkeys
    WHERE rdb_type IN (6, 7)
    GROUP BY pattern
)
SELECT f.pattern, f.keys, f.memory_bytes, f.keys_with_ttl,
       list_sort(list_concat(
           [t.name FOR t IN [{'name': 'array', 'bit': 1}, {'name': 'hash', 'bit': 2},
                             {'name': 'list', 'bit': 4}, {'name': 'set', 'bit': 8},
                             {'name': 'stream', 'bit': 16}, {'name': 'string', 'bit': 32},
                             {'name': 'zset', 'bit': 64}]
            IF f.type_bits & t.bit <> 0],
           coalesce(m.types, []))) AS types,
       f.largest.key AS largest_key, f.largest_memory_bytes, f.largest.ttl AS largest_key_has_ttl,
       f.memory_without_ttl
FROM f LEFT JOIN module_types AS m USING (pattern)
