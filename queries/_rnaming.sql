-- name: _rnaming
-- answers: (base relation, not a report) one row per key and naming rule it breaks, over `rkeys`:
--          dump_id, db, key, memory_bytes, pattern, rule. Created as a TEMP TABLE when a query
--          mentions `rnaming`. Rule ids and what they check are listed in naming_rules.
-- params:
--   delimiters (':')                 segment delimiters; a key with none of them is flat (no-delimiter)
--   allowed_chars ('A-Za-z0-9|_.:')  regex character-class body of allowed characters (disallowed-chars)
--   max_length (128)                 key bytes above this: max-length
--   recommended_length (30)          key bytes above this: recommended-length
--   generic_names (['data', 'temp', 'tmp', 'config', 'test', 'default', 'foo', 'bar'])  first segments too generic to say whose data it is (generic-name)
--   mixed_candidates (':./|#')       delimiter characters compared by mixed-delimiters
--   disabled ([])                    rule ids switched off
CREATE OR REPLACE TEMP TABLE rnaming AS
-- k, s and d are read twice (roots, flagged): NOT MATERIALIZED, to compute their cheap columns
-- twice rather than hold a copy of the keyspace
WITH k AS NOT MATERIALIZED (
    SELECT dump_id, db, key, key_length, family, memory_bytes, invalid_utf8,
           -- invalid UTF-8 bytes are shown as \xNN in `key`: drop them where the escape's own
           -- backslash or letters would count
           CASE WHEN invalid_utf8 THEN regexp_replace(key, '\\x[0-9a-fA-F]{2}', '', 'g') ELSE key END AS clean,
           -- Fast path: a key of lowercase letters, digits and `_`, starting with a letter, with at
           -- least one delimiter and all of them the first character of $delimiters, breaks none of
           -- the character rules (disallowed-chars, special-chars, not-letter-start, uppercase,
           -- no-delimiter, hashtag, control-chars), and its first segment, root and delimiter set
           -- need no regex.  The first three tests, on constants (computed once), check that these
           -- characters are allowed, that the delimiter is not special, and that no letter, digit
           -- or `_` is a delimiter or a mixed-delimiter candidate.  One regex for most keys instead
           -- of a dozen; the other keys go through every rule below.
           NOT regexp_matches('abcdefghijklmnopqrstuvwxyz0123456789_' || left($delimiters, 1), '[^' || $allowed_chars || ']')
           AND NOT regexp_matches(left($delimiters, 1), '[\\*?\[\]()\s''"{}\x00-\x1f\x7fA-Z]')
           AND NOT regexp_matches('abcdefghijklmnopqrstuvwxyz0123456789_', '[' || delim_class($delimiters || $mixed_candidates) || ']')
           AND regexp_full_match(key, '[a-z][a-z0-9_]*(?:[' || delim_class(left($delimiters, 1)) || '][a-z0-9_]*)+') AS fast
    FROM rkeys
), s AS NOT MATERIALIZED (
    SELECT *,
           -- first segment (generic-name): the text before the first of $delimiters
           CASE WHEN NOT fast THEN regexp_extract(key, '^[^' || delim_class($delimiters) || ']*')
                ELSE left(key, strpos(key, left($delimiters, 1)) - 1) END AS first_segment
    FROM k
), d AS NOT MATERIALIZED (
    SELECT *,
           -- family root: the text before the first mixed-delimiter candidate
           CASE WHEN NOT fast THEN regexp_extract(key, '^[^' || delim_class($mixed_candidates) || ']*')
                WHEN contains($mixed_candidates, left($delimiters, 1)) THEN first_segment
                ELSE key END AS root,
           -- the candidate delimiters the key holds, sorted ('' = none)
           CASE WHEN NOT fast THEN array_to_string(list_sort(list_distinct(
                    regexp_extract_all(key, '[' || delim_class($mixed_candidates) || ']'))), '')
                WHEN contains($mixed_candidates, left($delimiters, 1)) THEN left($delimiters, 1)
                ELSE '' END AS dset
    FROM s
), roots AS (
    -- a family root (text before the first delimiter) whose keys use different delimiters
    SELECT root, count(*) AS dsets, arg_max(dset, n) AS main_dset
    FROM (SELECT root, dset, count(*) * 1000000 + max(strlen(dset)) AS n
          FROM d GROUP BY root, dset
          -- = WHERE dset <> '' AND root <> '', but after the grouping: a WHERE would be pushed
          -- below it and compute root and dset twice per key
          HAVING max(strlen(dset)) > 0 AND max(strlen(root)) > 0)
    GROUP BY root
), checked AS (
    -- the rules a key on the fast path can still break, computed once per key
    SELECT d.*,
           -- generic-name: the first segment, trailing digits removed (fast keys are lowercase
           -- already), in the list (list_position: list_contains is planned as a join)
           list_position($generic_names, CASE
               WHEN NOT d.fast THEN lower(regexp_replace(d.first_segment, '[-_.]?[0-9]+$', ''))
               WHEN right(d.first_segment, 1) BETWEEN '0' AND '9' THEN regexp_replace(d.first_segment, '[-_.]?[0-9]+$', '')
               ELSE d.first_segment END) > 0 AS generic,
           strlen(d.dset) > 1 OR (r.dsets > 1 AND d.dset <> '' AND d.dset <> r.main_dset) AS mixed
    FROM d LEFT JOIN roots AS r USING (root)
), flagged AS (
    -- the rules each key breaks, comma-separated ('' = none): nothing to assemble for a fast key
    -- within the lengths that breaks none of those; the character rules only off the fast path
    -- (WHEN fast THEN NULL: CASE evaluates the regex on the other keys only)
    SELECT dump_id, db, key, family, memory_bytes,
           CASE WHEN fast AND key_length <= $max_length AND key_length <= $recommended_length
                     AND NOT invalid_utf8 AND NOT coalesce(generic, false) AND NOT coalesce(mixed, false) THEN ''
           ELSE concat_ws(',',
               CASE WHEN fast THEN NULL WHEN regexp_matches(key, '[^' || $allowed_chars || ']') THEN 'disallowed-chars' END,
               CASE WHEN fast THEN NULL WHEN regexp_matches(clean, '[\\*?\[\]()\s''"]')
                      OR (regexp_matches(key, '[{}]') AND key_hashtag(key) IS NULL) THEN 'special-chars' END,
               CASE WHEN fast THEN NULL WHEN NOT regexp_matches(key, '^[A-Za-z]') THEN 'not-letter-start' END,
               CASE WHEN fast THEN NULL WHEN regexp_matches(clean, '[A-Z]') THEN 'uppercase' END,
               CASE WHEN key_length > $max_length THEN 'max-length' END,
               CASE WHEN key_length > $recommended_length THEN 'recommended-length' END,
               CASE WHEN fast THEN NULL WHEN NOT regexp_matches(key, '[' || delim_class($delimiters) || ']') THEN 'no-delimiter' END,
               CASE WHEN fast THEN NULL WHEN key_hashtag(key) IS NOT NULL THEN 'hashtag' END,
               CASE WHEN invalid_utf8 THEN 'invalid-utf8' END,
               CASE WHEN fast THEN NULL WHEN regexp_matches(key, '[\x00-\x1f\x7f]') THEN 'control-chars' END,
               CASE WHEN generic THEN 'generic-name' END,
               CASE WHEN mixed THEN 'mixed-delimiters' END) END AS rules
    FROM checked
)
-- one row per rule broken; the family (as rkeys.pattern: keys.family for the default delimiter)
-- only for the keys that break one (key_pattern is costly). Rows are filtered after the unnest:
-- a filter on `rules` would be pushed below `flagged` and evaluate every rule twice.
SELECT dump_id, db, key, memory_bytes, pattern, rule
FROM (SELECT dump_id, db, key, memory_bytes, pattern, unnest(string_split(rules, ',')) AS rule
      FROM (SELECT *, CASE WHEN rules <> '' THEN key_family(key, family, delimiters := $delimiters) END AS pattern
            FROM flagged))
WHERE rule <> '' AND NOT list_contains($disabled, rule)
