-- name: _rnaming
-- answers: (base relation, not a report) one row per key and naming rule it breaks, over `rkeys`:
--          dump_id, db, key, memory_bytes, pattern, rule, first_rule (true on one row of each key
--          that breaks a rule other than the opt-in type-name, so that naming_summary counts keys
--          without grouping them). Created as a TEMP TABLE when a query mentions `rnaming`. Rule
--          ids and what they check are listed in naming_rules.
-- params:
--   delimiters (':')                 segment delimiters; a key with none of them is flat (no-delimiter)
--   allowed_chars ('A-Za-z0-9|_.:')  regex character-class body of allowed characters (disallowed-chars)
--   max_length (128)                 key bytes above this: max-length
--   recommended_length (30)          key bytes above this: recommended-length
--   generic_names (['data', 'temp', 'tmp', 'config', 'test', 'default', 'foo', 'bar'])  first segments too generic to say whose data it is (generic-name)
--   mixed_candidates (':./|#')       delimiter characters compared by mixed-delimiters
--   disabled (['type-name'])         rule ids switched off (the opt-in rule type-name is off unless enabled)
--
-- Fast keys: a key of lowercase letters, digits and `_`, starting with a letter, with at least one
-- delimiter and all of them the first character of $delimiters, breaks none of the character
-- rules (disallowed-chars, special-chars, not-letter-start, uppercase, no-delimiter, hashtag,
-- control-chars), and its first segment, root and delimiter set need no regex. For `:` that is
-- keys.plain_key, which the loader stored; for another delimiter, one regex. The rules left for a
-- fast key depend on its length and its first segment only (generic-name, mixed-delimiters), so:
--   1. rnaming_groups: (root, delimiter set) counts over every key; fast keys under `:` are counted
--      per family (keys.family keeps the first segment unless it starts with a placeholder), with
--      no string work per key (a GROUP BY of the stored family, apart from the other keys' GROUP BY
--      root and delimiter set: one GROUP BY of the three would hash three strings per key);
--   2. rnaming_roots: the roots whose keys use more than one delimiter set (mixed-delimiters);
--      rnaming_families: the families of fast keys whose first segment breaks a rule;
--   3. rnaming: every rule for the other keys and for fast keys in such a family; a fast key in
--      any other family can break the length rules only, which are all it is tested for (no first
--      segment, root or delimiter set: CASE WHEN NOT lengths_only), and within the lengths it is
--      skipped.
-- The three checks on constants in rnaming_fast_ok (computed once) confirm that these characters
-- are allowed, that the delimiter is not special, and that no letter, digit or `_` is a delimiter
-- or a mixed-delimiter candidate; otherwise no key is fast.
-- Near keys: a fast key but for `-` after its first segment (`session:<uuid>`), when `-` is neither
-- a delimiter nor a candidate: its first segment, root and delimiter set are a fast key's, it
-- breaks disallowed-chars exactly when `-` is not allowed, and no other character rule. It is
-- checked key by key (not per family), with one regex instead of a dozen.
CREATE OR REPLACE TEMP MACRO rnaming_fast_ok(delimiters, allowed_chars, mixed_candidates) AS
    NOT regexp_matches('abcdefghijklmnopqrstuvwxyz0123456789_' || left(delimiters, 1), '[^' || allowed_chars || ']')
    AND NOT regexp_matches(left(delimiters, 1), '[\\*?\[\]()\s''"{}\x00-\x1f\x7fA-Z]')
    AND NOT regexp_matches('abcdefghijklmnopqrstuvwxyz0123456789_', '[' || delim_class(delimiters || mixed_candidates) || ']');
CREATE OR REPLACE TEMP MACRO rnaming_fast(key, plain_key, delimiters, allowed_chars, mixed_candidates) AS
    rnaming_fast_ok(delimiters, allowed_chars, mixed_candidates)
    AND CASE WHEN left(delimiters, 1) = ':' AND plain_key IS NOT NULL THEN plain_key
             ELSE is_plain_key(key, left(delimiters, 1)) END;
-- counted per family: a fast key under `:` whose family starts with its first segment. From
-- keys.plain_key alone, never the key: DuckDB then reads no key name for these keys (rnaming_fast
-- names the key for its regex, and over 5 M keys rnaming_groups took 0.20 against 0.12 CPU s). A
-- key without plain_key (the loader always stores it) is not counted per family but checked
-- key by key, where rnaming_fast's regex decides
CREATE OR REPLACE TEMP MACRO rnaming_by_family(plain_key, family, delimiters, allowed_chars, mixed_candidates) AS
    rnaming_fast_ok(delimiters, allowed_chars, mixed_candidates) AND left(delimiters, 1) = ':'
    AND plain_key IS TRUE AND NOT starts_with(family, '{');
-- near: a key that is not fast, holds a `-` and is a fast key's characters plus `-` after its first
-- segment (CASE: the regex on the other keys only)
CREATE OR REPLACE TEMP MACRO rnaming_near(key, fast, delimiters, allowed_chars, mixed_candidates) AS
    CASE WHEN fast OR NOT contains(key, '-') OR contains(delimiters || mixed_candidates, '-')
              OR NOT rnaming_fast_ok(delimiters, allowed_chars, mixed_candidates) THEN false
         ELSE regexp_full_match(key, '[a-z][a-z0-9_]*(?:[' || delim_class(left(delimiters, 1)) || '][a-z0-9_-]*)+') END;
-- first segment (generic-name): the text before the first of $delimiters. In the macros below,
-- `fast` is true for fast and near keys alike
CREATE OR REPLACE TEMP MACRO rnaming_first(key, fast, delimiters) AS
    CASE WHEN NOT fast THEN regexp_extract(key, '^[^' || delim_class(delimiters) || ']*')
         ELSE left(key, strpos(key, left(delimiters, 1)) - 1) END;
-- family root (mixed-delimiters): the text before the first mixed-delimiter candidate
CREATE OR REPLACE TEMP MACRO rnaming_root(key, fast, first_segment, delimiters, mixed_candidates) AS
    CASE WHEN NOT fast THEN regexp_extract(key, '^[^' || delim_class(mixed_candidates) || ']*')
         WHEN contains(mixed_candidates, left(delimiters, 1)) THEN first_segment
         ELSE key END;
-- the candidate delimiters the key holds, sorted ('' = none), read from its family (keys.family):
-- a character inside an id-like value is no delimiter (`ratelimit:10.1.2.3` is
-- `ratelimit:{ip}`, `price:3.5` is `price:{id}`: `:` alone). Each candidate tested with
-- contains(), in the sorted list of candidates (a constant). regexp_extract_all, list_distinct
-- and list_sort of every match cost nine times as much, and a first regex to skip them for keys
-- of one candidate twice as much
CREATE OR REPLACE TEMP MACRO rnaming_dset_of(name, mixed_candidates) AS
    array_to_string([c FOR c IN list_sort(list_distinct(string_split(mixed_candidates, ''))) IF contains(name, c)], '');
CREATE OR REPLACE TEMP MACRO rnaming_dset(family, fast, delimiters, mixed_candidates) AS
    CASE WHEN NOT fast THEN rnaming_dset_of(family, mixed_candidates)
         WHEN contains(mixed_candidates, left(delimiters, 1)) THEN left(delimiters, 1)
         ELSE '' END;
-- generic-name: the first segment, trailing digits removed (fast keys are lowercase already), in
-- the list (list_position: list_contains is planned as a join)
CREATE OR REPLACE TEMP MACRO rnaming_generic(first_segment, fast, generic_names) AS
    list_position(generic_names, CASE
        WHEN NOT fast THEN lower(regexp_replace(first_segment, '[-_.]?[0-9]+$', ''))
        WHEN right(first_segment, 1) BETWEEN '0' AND '9' THEN regexp_replace(first_segment, '[-_.]?[0-9]+$', '')
        ELSE first_segment END) > 0;
CREATE OR REPLACE TEMP TABLE rnaming_groups AS
WITH k AS NOT MATERIALIZED (
    SELECT key, family, fast,
           rnaming_by_family(plain_key, family, $delimiters, $allowed_chars, $mixed_candidates) AS by_family
    FROM (SELECT key, family, plain_key,
                 rnaming_fast(key, plain_key, $delimiters, $allowed_chars, $mixed_candidates) AS fast
          FROM rkeys)
), r AS (
    -- the other keys: root and delimiter set key by key
    SELECT rnaming_root(key, fast, rnaming_first(key, fast, $delimiters), $delimiters, $mixed_candidates) AS root,
           rnaming_dset(family, fast, $delimiters, $mixed_candidates) AS dset
    FROM (SELECT key, family, fast OR rnaming_near(key, fast, $delimiters, $allowed_chars, $mixed_candidates) AS fast
          FROM k WHERE NOT by_family)
)
-- family rows (a GROUP BY of the stored family, no string work per key): root = the family's first
-- segment, which is the keys' first segment
SELECT family, split_part(family, ':', 1) AS root,
       CASE WHEN contains($mixed_candidates, ':') THEN ':' ELSE '' END AS dset, count(*) AS n
FROM k WHERE by_family GROUP BY family
UNION ALL
SELECT NULL AS family, root, dset, count(*) AS n
FROM r
GROUP BY root, dset
-- the roots with a delimiter (= WHERE, but after the grouping: a WHERE would be pushed below it
-- and compute root and dset twice per key)
HAVING max(strlen(dset)) > 0 AND max(strlen(root)) > 0;
CREATE OR REPLACE TEMP TABLE rnaming_roots AS
-- a family root (text before the first delimiter) whose keys use different delimiters, and the
-- delimiter set most of its keys use (ties: the longest, then the last in byte order)
SELECT root, count(*) AS dsets, arg_max(dset, {'keys': n, 'length': strlen(dset), 'dset': dset}) AS main_dset
FROM (SELECT root, dset, sum(n) AS n
      FROM rnaming_groups WHERE dset <> '' AND root <> '' GROUP BY root, dset)
GROUP BY root
HAVING count(*) > 1;
CREATE OR REPLACE TEMP TABLE rnaming_families AS
-- families of fast keys whose first segment is generic or a root with mixed delimiters
SELECT DISTINCT g.family
FROM rnaming_groups AS g LEFT JOIN rnaming_roots AS r USING (root)
WHERE g.family IS NOT NULL
  AND (rnaming_generic(g.root, true, $generic_names) OR (g.dset <> '' AND g.dset <> r.main_dset));
CREATE OR REPLACE TEMP TABLE rnaming AS
-- k, s and d are read twice (the roots join, flagged): NOT MATERIALIZED, to compute their cheap
-- columns twice rather than hold a copy of the keys
WITH k AS NOT MATERIALIZED (
    SELECT *
    FROM (SELECT *,
                 -- a fast key in a family whose first segment breaks no rule: the lengths are all
                 -- it can break (see the top of this file)
                 rnaming_by_family(plain_key, family, $delimiters, $allowed_chars, $mixed_candidates)
                      AND family IS NOT NULL AND family NOT IN (SELECT family FROM rnaming_families) AS lengths_only
          FROM (SELECT dump_id, db, key, key_length, family, plain_key, memory_bytes, invalid_utf8,
                       rnaming_fast(key, plain_key, $delimiters, $allowed_chars, $mixed_candidates) AS fast
                FROM rkeys))
    -- the keys that can break a rule
    WHERE NOT lengths_only OR key_length > least($max_length, $recommended_length)
), s AS NOT MATERIALIZED (
    SELECT *,
           -- invalid UTF-8 bytes are shown as \xNN in `key`: drop them where the escape's own
           -- backslash or letters would count
           CASE WHEN invalid_utf8 THEN regexp_replace(key, '\\x[0-9a-fA-F]{2}', '', 'g') ELSE key END AS clean,
           -- off the fast path: does the key hold a character that special-chars, uppercase,
           -- hashtag or control-chars look for? One regex for the four, whose own tests then run
           -- only on such keys (`clean` holds no character that `key` does not)
           NOT fast AND NOT near AND regexp_matches(key, '[\\*?\[\]()\s''"{}A-Z\x00-\x1f\x7f]') AS odd,
           CASE WHEN NOT lengths_only THEN rnaming_first(key, fast OR near, $delimiters) END AS first_segment
    FROM (SELECT *, rnaming_near(key, fast, $delimiters, $allowed_chars, $mixed_candidates) AS near FROM k)
), d AS NOT MATERIALIZED (
    SELECT *,
           CASE WHEN NOT lengths_only THEN rnaming_root(key, fast OR near, first_segment, $delimiters, $mixed_candidates) END AS root,
           CASE WHEN NOT lengths_only THEN rnaming_dset(family, fast OR near, $delimiters, $mixed_candidates) END AS dset
    FROM s
), checked AS (
    -- the rules a fast key can still break, computed once per key
    SELECT d.*,
           NOT d.lengths_only AND rnaming_generic(d.first_segment, d.fast OR d.near, $generic_names) AS generic,
           strlen(d.dset) > 1 OR (d.dset <> '' AND d.dset <> r.main_dset) AS mixed
    FROM d LEFT JOIN rnaming_roots AS r USING (root)
), flagged AS (
    -- the rules each key breaks, comma-separated ('' = none): nothing to assemble for a fast key
    -- within the lengths that breaks none of those; the character rules only off the fast path
    -- (WHEN fast THEN NULL: CASE evaluates the regex on the other keys only); a near key's
    -- only disallowed character can be its `-`
    SELECT dump_id, db, key, family, memory_bytes,
           CASE WHEN fast AND key_length <= $max_length AND key_length <= $recommended_length
                     AND NOT invalid_utf8 AND NOT coalesce(generic, false) AND NOT coalesce(mixed, false) THEN ''
           ELSE concat_ws(',',
               CASE WHEN fast THEN NULL WHEN regexp_matches(CASE WHEN near THEN '-' ELSE key END, '[^' || $allowed_chars || ']') THEN 'disallowed-chars' END,
               CASE WHEN NOT odd THEN NULL WHEN regexp_matches(clean, '[\\*?\[\]()\s''"]')
                      OR (regexp_matches(key, '[{}]') AND key_hashtag(key) IS NULL) THEN 'special-chars' END,
               CASE WHEN fast OR near THEN NULL WHEN NOT regexp_matches(key, '^[A-Za-z]') THEN 'not-letter-start' END,
               CASE WHEN NOT odd THEN NULL WHEN regexp_matches(clean, '[A-Z]') THEN 'uppercase' END,
               CASE WHEN key_length > $max_length THEN 'max-length' END,
               CASE WHEN key_length > $recommended_length THEN 'recommended-length' END,
               CASE WHEN fast OR near THEN NULL WHEN NOT regexp_matches(key, '[' || delim_class($delimiters) || ']') THEN 'no-delimiter' END,
               CASE WHEN NOT odd THEN NULL WHEN key_hashtag(key) IS NOT NULL THEN 'hashtag' END,
               CASE WHEN invalid_utf8 THEN 'invalid-utf8' END,
               CASE WHEN NOT odd THEN NULL WHEN regexp_matches(key, '[\x00-\x1f\x7f]') THEN 'control-chars' END,
               CASE WHEN generic THEN 'generic-name' END,
               CASE WHEN mixed THEN 'mixed-delimiters' END) END AS rules
    FROM checked
)
-- one row per rule broken; the family (as rkeys.pattern: keys.family for the default delimiter)
-- only for the keys that break one (key_pattern is costly). The rules a key breaks, those not
-- disabled, as one list per key (no filter on `rules`: it would be pushed below `flagged` and
-- evaluate every rule twice); first_rule marks the first of them, one row per key.  A list
-- comprehension, not a lambda: DuckDB before 1.3 has no `lambda x:`, 1.3+ refuses `x ->`
SELECT dump_id, db, key, memory_bytes, pattern, unnest(kept) AS rule, generate_subscripts(kept, 1) = 1 AS first_rule
FROM (SELECT dump_id, db, key, memory_bytes, pattern,
             [r FOR r IN string_split(rules, ',') IF r <> '' AND NOT list_contains($disabled, r)] AS kept
      FROM (SELECT *, CASE WHEN rules <> '' THEN key_family(key, family, delimiters := $delimiters) END AS pattern
            FROM flagged))
UNION ALL
-- type-name (opt-in): the key names a type in a whole segment (`app:hash:1`, `cfg:theme:string`;
-- segments end at the delimiters and `#`, any case) and its type is none of those it names. The
-- regex runs only when the rule is on (the first condition is a constant).
SELECT dump_id, db, key, memory_bytes, pattern, 'type-name' AS rule, false AS first_rule
FROM (SELECT dump_id, db, key, memory_bytes, pattern, type,
             list_intersect(string_split_regex(lower(key), '[' || delim_class($delimiters || '#') || ']'),
                            ['string', 'hash', 'list', 'set', 'zset', 'stream']) AS named
      FROM rkeys
      WHERE NOT list_contains($disabled, 'type-name')
        AND regexp_matches(lower(key), '(?:^|[' || delim_class($delimiters || '#') || '])(?:string|hash|list|set|zset|stream)(?:[' || delim_class($delimiters || '#') || ']|$)'))
WHERE len(named) > 0 AND NOT list_contains(named, type)
