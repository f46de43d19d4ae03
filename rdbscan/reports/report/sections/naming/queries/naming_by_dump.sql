-- name: naming_by_dump
-- answers: Per dump, what its report alone says of the naming rules its keys break: per rule the
--          keys breaking it, and the distinct keys (and their memory) breaking any; for a report
--          over many dumps (naming/build.py by_dump). Every rule but mixed-delimiters judges a key
--          by its name alone, so `rnaming` has those rows already, each with its dump. Whether a
--          key mixes delimiters depends on the other keys of its family root (the delimiter set
--          most of them use, _rnaming.sql's rnaming_roots): that is worked out again per dump,
--          GROUP BY dump_id wherever _rnaming groups, with _rnaming's macros.
-- params:
--   delimiters (':')                 segment delimiters (as _rnaming)
--   allowed_chars ('A-Za-z0-9|_.:')  allowed characters (as _rnaming: which keys are fast)
--   mixed_candidates (':./|#')       delimiter characters compared by mixed-delimiters
--   disabled (['type-name'])         rule ids switched off
-- k is read several times: NOT MATERIALIZED (cheap columns, computed again). d is read twice (the
-- groups, then the keys flagged) and costs regexes per key: MATERIALIZED, which holds the keys
-- not counted per family (under `:`, those that are not plain) with their roots
WITH k AS NOT MATERIALIZED (
    SELECT dump_id, db, key, memory_bytes, family, fast,
           -- counted per family, as rnaming_groups does
           rnaming_by_family(plain_key, family, $delimiters, $allowed_chars, $mixed_candidates) AS by_family
    FROM (SELECT dump_id, db, key, memory_bytes, family, plain_key,
                 rnaming_fast(key, plain_key, $delimiters, $allowed_chars, $mixed_candidates) AS fast
          FROM rkeys
          WHERE NOT list_contains($disabled, 'mixed-delimiters'))
), d AS MATERIALIZED (
    -- the other keys: their root and delimiter set, key by key
    SELECT dump_id, db, key, memory_bytes,
           rnaming_root(key, fast, rnaming_first(key, fast, $delimiters), $delimiters, $mixed_candidates) AS root,
           rnaming_dset(family, fast, $delimiters, $mixed_candidates) AS dset
    FROM k
    WHERE NOT by_family
), fam AS (
    -- a family of fast keys: its root is the keys' first segment, their delimiter set `:`
    SELECT dump_id, family, split_part(family, ':', 1) AS root,
           CASE WHEN contains($mixed_candidates, ':') THEN ':' ELSE '' END AS dset, count(*) AS n
    FROM k
    WHERE by_family
    GROUP BY dump_id, family
), roots AS (
    -- per dump, a root whose keys use different delimiter sets, and the set most of them use
    -- (ties: the longest, then the last in byte order), as rnaming_roots over the dump's keys
    SELECT dump_id, root, arg_max(dset, {'keys': n, 'length': strlen(dset), 'dset': dset}) AS main_dset
    FROM (SELECT dump_id, root, dset, sum(n) AS n
          FROM (SELECT dump_id, root, dset, n FROM fam
                UNION ALL
                SELECT dump_id, root, dset, count(*) FROM d GROUP BY ALL)
          WHERE dset <> '' AND root <> ''
          GROUP BY ALL)
    GROUP BY ALL
    HAVING count(*) > 1
), mixed AS (
    -- the keys breaking mixed-delimiters in their dump: every key of a family of fast keys
    -- whose root is written with another set by most keys, and the other keys one by one
    SELECT k.dump_id, k.db, k.key, k.memory_bytes
    FROM k
    JOIN (SELECT f.dump_id, f.family FROM fam AS f JOIN roots AS r USING (dump_id, root)
          WHERE f.dset <> '' AND f.dset <> r.main_dset) AS m USING (dump_id, family)
    WHERE k.by_family
    UNION ALL
    SELECT d.dump_id, d.db, d.key, d.memory_bytes
    FROM d LEFT JOIN roots AS r USING (dump_id, root)
    WHERE strlen(d.dset) > 1 OR (d.dset <> '' AND d.dset <> r.main_dset)
), broken AS MATERIALIZED (
    SELECT dump_id, db, key, memory_bytes, rule FROM rnaming WHERE rule <> 'mixed-delimiters'
    UNION ALL
    SELECT dump_id, db, key, memory_bytes, 'mixed-delimiters' FROM mixed
), per_rule AS (
    SELECT dump_id, list({'rule': rule, 'keys': keys} ORDER BY rule) AS rules
    FROM (SELECT dump_id, rule, count(*) AS keys FROM broken GROUP BY ALL)
    GROUP BY dump_id
), per_key AS (
    SELECT dump_id, count(*) AS keys, sum(memory_bytes) AS memory_bytes
    FROM (SELECT dump_id, db, key, any_value(memory_bytes) AS memory_bytes
          FROM broken GROUP BY dump_id, db, key)
    GROUP BY dump_id
)
SELECT dump_id, p.keys, p.memory_bytes, r.rules
FROM per_key AS p JOIN per_rule AS r USING (dump_id)
ORDER BY dump_id
