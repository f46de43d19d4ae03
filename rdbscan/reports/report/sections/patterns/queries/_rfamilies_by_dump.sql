-- name: _rfamilies_by_dump
-- answers: (base relation, not a report) one row per dump and key family (`pattern`) of `rkeys`:
--          what each dump's report alone reads of its families (as _rfamilies counts them over
--          its keys), for a report over more than MAX_DUMPS_ALONE dumps (the sections' by_dump:
--          patterns_by_dump, ttl_families_by_dump): one pass over the keys, one GROUP BY.
--          Created as a TEMP TABLE `rfamilies_by_dump` when a query mentions it.
-- params: none
-- columns: dump_id, pattern, keys, memory_bytes, keys_with_ttl, memory_without_ttl (NULL when
--   every key of the family has a TTL)
CREATE OR REPLACE TEMP TABLE rfamilies_by_dump AS
SELECT dump_id, pattern,
       count(*)::BIGINT AS keys,
       sum(memory_bytes) AS memory_bytes,
       count(expire_at_ms)::BIGINT AS keys_with_ttl,
       sum(memory_bytes) FILTER (WHERE expire_at_ms IS NULL) AS memory_without_ttl
FROM rkeys
GROUP BY dump_id, pattern
