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
WITH k AS (
    SELECT dump_id, db, key, key_length, memory_bytes, pattern, invalid_utf8,
           -- invalid UTF-8 bytes are shown as \xNN in `key`: drop them where the escape's own
           -- backslash or letters would count
           CASE WHEN invalid_utf8 THEN regexp_replace(key, '\\x[0-9a-fA-F]{2}', '', 'g') ELSE key END AS clean,
           regexp_extract(key, '^[^' || delim_class($mixed_candidates) || ']*') AS root,
           array_to_string(list_sort(list_distinct(string_split(
               regexp_replace(key, '[^' || delim_class($mixed_candidates) || ']', '', 'g'), ''))), '') AS dset
    FROM rkeys
), roots AS (
    -- a family root (text before the first delimiter) whose keys use different delimiters
    SELECT root, count(*) AS dsets, arg_max(dset, n) AS main_dset
    FROM (SELECT root, dset, count(*) * 1000000 + max(strlen(dset)) AS n
          FROM k WHERE dset <> '' AND root <> '' GROUP BY root, dset)
    GROUP BY root
), flagged AS (
    SELECT k.dump_id, k.db, k.key, k.memory_bytes, k.pattern, unnest(string_split(concat_ws(',',
        CASE WHEN regexp_matches(k.key, '[^' || $allowed_chars || ']') THEN 'disallowed-chars' END,
        CASE WHEN regexp_matches(k.clean, '[\\*?\[\]()\s''"]')
               OR (regexp_matches(k.key, '[{}]') AND key_hashtag(k.key) IS NULL) THEN 'special-chars' END,
        CASE WHEN NOT regexp_matches(k.key, '^[A-Za-z]') THEN 'not-letter-start' END,
        CASE WHEN regexp_matches(k.clean, '[A-Z]') THEN 'uppercase' END,
        CASE WHEN k.key_length > $max_length THEN 'max-length' END,
        CASE WHEN k.key_length > $recommended_length THEN 'recommended-length' END,
        CASE WHEN NOT regexp_matches(k.key, '[' || delim_class($delimiters) || ']') THEN 'no-delimiter' END,
        CASE WHEN key_hashtag(k.key) IS NOT NULL THEN 'hashtag' END,
        CASE WHEN k.invalid_utf8 THEN 'invalid-utf8' END,
        CASE WHEN regexp_matches(k.key, '[\x00-\x1f\x7f]') THEN 'control-chars' END,
        CASE WHEN list_contains($generic_names, lower(regexp_replace(
                 regexp_extract(k.key, '^[^' || delim_class($delimiters) || ']*'), '[-_.]?[0-9]+$', '')))
             THEN 'generic-name' END,
        CASE WHEN strlen(k.dset) > 1 OR (r.dsets > 1 AND k.dset <> '' AND k.dset <> r.main_dset)
             THEN 'mixed-delimiters' END
    ), ',')) AS rule
    FROM k LEFT JOIN roots AS r USING (root)
)
SELECT dump_id, db, key, memory_bytes, pattern, rule
FROM flagged
WHERE rule <> '' AND NOT list_contains($disabled, rule)
