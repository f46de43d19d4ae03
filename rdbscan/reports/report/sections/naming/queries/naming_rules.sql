-- name: naming_rules
-- answers: Which naming rules the keys break: per rule its id, what it checks, keys, memory and
--          example keys (largest first). Rules switched off are absent; rules nobody breaks show 0.
-- params:
--   examples (5)     example keys per rule
--   disabled (['type-name'])   rule ids switched off (the opt-in rule type-name is off unless enabled)
WITH rules(rule, ord, description) AS (VALUES
    ('disallowed-chars', 1, 'characters outside the allowed set (default A-Za-z0-9 | _ . :)'),
    ('special-chars', 2, 'glob/regex specials \ * ? [ ] ( ), stray { }, spaces or quotes'),
    ('not-letter-start', 3, 'does not start with a letter'),
    ('uppercase', 4, 'uppercase letters (UPPERCASE or camelCase)'),
    ('max-length', 5, 'longer than the maximum key length'),
    ('recommended-length', 6, 'longer than the recommended key length'),
    ('no-delimiter', 7, 'flat key: no delimiter at all'),
    ('hashtag', 8, '{hashtag}: pins keys to one cluster slot (fine when intended)'),
    ('invalid-utf8', 9, 'key bytes are not valid UTF-8'),
    ('control-chars', 10, 'control bytes (tab, newline, NUL, ...)'),
    ('generic-name', 11, 'generic first segment (data, temp, config, test, ...)'),
    ('mixed-delimiters', 12, 'a family whose keys use different delimiters'),
    ('type-name', 13, 'names a Redis type (a string, hash, list, set, zset or stream segment) other than its own (opt-in)')
), agg AS (
    -- examples: the largest keys first (memory_bytes DESC, key); min_by(x, by, n) keeps the n
    -- smallest `by` in order, without sorting every key of the rule
    SELECT rule, count(*) AS keys, sum(memory_bytes) AS memory_bytes,
           min_by(key, {'m': -memory_bytes, 'k': key}, greatest($examples, 1))[1:greatest($examples, 0)] AS examples
    FROM rnaming GROUP BY rule
)
SELECT r.rule, r.description, coalesce(a.keys, 0) AS keys, coalesce(a.memory_bytes, 0) AS memory_bytes,
       coalesce(a.examples, []) AS examples
FROM rules AS r LEFT JOIN agg AS a USING (rule)
WHERE NOT list_contains($disabled, r.rule)
ORDER BY r.ord
