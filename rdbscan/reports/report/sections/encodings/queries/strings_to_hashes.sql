-- name: strings_to_hashes
-- answers: Which families of many small string keys would be cheaper as fields of hashes (the
--          `user:1:name`, `user:1:age` -> `HSET user:1 name .. age ..` pattern), with the estimated
--          saving. Keys with a TTL are left out (a hash field loses the key's TTL unless the server
--          has hash field expiration, 7.4+). Each parent hash must fit the listpack thresholds
--          of its dump's server (`rservers`; a value given here holds for every dump).
-- by dump: The families of small string keys that each dump's report alone lists in
--          strings_to_hashes (its `top`, largest saving first), with the same parents and
--          estimates: GROUP BY dump_id, family, for a report over many dumps (encodings/build.py
--          by_dump).
-- params:
--   delimiters (':')                 characters that separate segments; the last segment becomes the field
--   min_fields (2)                   parents with fewer string keys are ignored
--   from _rlimits.sql: hash_max_listpack_entries, hash_max_listpack_value
--   top (10)                         families returned (by dump: per dump); 0 = all
WITH s AS (
    SELECT dump_id, db, key, key_length, length, memory_bytes, family, plain_key,
           -- Under `:`, a plain key (ASCII words joined by `:`) whose family holds no placeholder
           -- before its last `:` has the family's text before that `:` as its parent
           -- (key_pattern replaces whole segments with placeholders and keeps the others): such
           -- keys are counted per family, and the string work is done once per family.
           -- "a `{` before the last `:`, or a `{` and no `:`": LIKE tests a family's text without
           -- building the part before its last `:` (a plain key's family is ASCII), a sixth of the
           -- cost of left(family, strlen(family) - strpos(reverse(family), ':'))
           $delimiters = ':' AND plain_key
               AND NOT (family LIKE '%{%:%' OR (family NOT LIKE '%:%' AND family LIKE '%{%')) AS by_family
    FROM rkeys JOIN rservers AS r USING (dump_id)
    -- rdb_type 0 (RDB_TYPE_STRING): type = 'string' (a module's type name has 9 characters),
    -- tested on the stored byte, in the scan, rather than on the name the view works out per key
    WHERE rdb_type = 0 AND expire_at_ms IS NULL AND length <= r.hash_max_listpack_value
), k AS (
    SELECT dump_id, db, key, key_length, length, memory_bytes, by_family,
           CASE WHEN by_family THEN family END AS family,
           -- the other keys: the key without its last delimiter and what follows (the key itself
           -- when it has none); a plain key (ASCII, with a `:`) under `:` is cut at the last `:`,
           -- found from the end (a third cheaper than the regex)
           CASE WHEN by_family THEN NULL
                WHEN plain_key AND $delimiters = ':' THEN left(key, strlen(key) - strpos(reverse(key), ':'))
                ELSE regexp_replace(key, '[' || delim_class($delimiters) || '][^' || delim_class($delimiters) || ']*$', '') END AS stripped
    FROM s
), per AS (
    -- per family (keys counted per family) or per parent (the other keys). parent =
    -- regexp_extract(key, '^(.*)[delimiters][^delimiters]*$', 1): the key up to its last
    -- delimiter, '' when it has none or when a newline comes before it (`.` does not match
    -- one); delim: that last delimiter
    SELECT dump_id, db, family,
           CASE WHEN by_family THEN NULL
                WHEN strlen(stripped) < strlen(key) AND NOT contains(stripped, chr(10)) THEN stripped ELSE '' END AS parent,
           CASE WHEN by_family THEN ':' ELSE substr(key, length(stripped) + 1, 1) END AS delim,
           count(*) AS fields,
           sum(memory_bytes) AS memory_bytes,
           sum(key_length + length) AS key_value_bytes,
           max(key_length) AS longest_key
    FROM k
    GROUP BY ALL
), p AS (
    SELECT dump_id, db, parent, any_value(delim) AS delim,
           sum(fields) AS fields,
           sum(memory_bytes) AS memory_bytes,
           -- listpack: field and value entries, ~2 bytes of overhead each, 7 bytes of header
           -- (= 7 + sum(field bytes + value bytes + 4), field = the key after the parent and delimiter)
           7 + sum(key_value_bytes) + sum(fields) * (3 - strlen(parent)) AS lp_bytes
    FROM (SELECT * REPLACE (coalesce(parent, left(family, strlen(family) - strpos(reverse(family), ':'))) AS parent),
                 longest_key
          FROM per) AS x
    JOIN rservers AS r USING (dump_id)
    WHERE parent <> ''
    GROUP BY dump_id, db, parent, r.hash_max_listpack_entries, r.hash_max_listpack_value
    HAVING sum(fields) >= $min_fields AND sum(fields) <= r.hash_max_listpack_entries
       AND max(longest_key) - strlen(parent) - 1 <= r.hash_max_listpack_value
), est AS (
    SELECT *, compact_memory_estimate(strlen(parent), lp_bytes) AS estimated_bytes,
           key_pattern(parent, delimiters := $delimiters) || delim || '*' AS family
    FROM p
)
SELECT /*by dump: dump_id,*/ family,
       count(*) AS hashes,
       sum(fields) AS keys,
       sum(memory_bytes) AS memory_bytes,
       sum(estimated_bytes) AS estimated_bytes,
       sum(memory_bytes) - sum(estimated_bytes) AS savings_bytes,
       -- the parent with the most fields (ties: the first in byte order)
       arg_min(parent, {'fields': -fields, 'parent': parent}) AS example_parent
FROM est
GROUP BY /*by dump: dump_id,*/ family
HAVING sum(memory_bytes) > sum(estimated_bytes)
QUALIFY $top = 0
        OR row_number() OVER (/*by dump: PARTITION BY dump_id*/ ORDER BY savings_bytes DESC, family) <= $top
ORDER BY /*by dump: dump_id,*/ savings_bytes DESC, family
