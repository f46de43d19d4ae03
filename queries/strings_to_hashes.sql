-- name: strings_to_hashes
-- answers: Which families of many small string keys would be cheaper as fields of hashes (the
--          `user:1:name`, `user:1:age` -> `HSET user:1 name .. age ..` pattern), with the estimated
--          saving. Keys with a TTL are left out (a hash field loses the key's TTL unless the server
--          has hash field expiration, 7.4+). Each parent hash must fit the listpack thresholds.
-- params:
--   delimiters (':')                 characters that separate segments; the last segment becomes the field
--   min_fields (2)                   parents with fewer string keys are ignored
--   hash_max_listpack_entries (512)  fields per parent hash at most
--   hash_max_listpack_value (64)     field name and value bytes at most
--   top (10)                         families returned; 0 = all
WITH s0 AS (
    -- the key without its last delimiter and what follows (the key itself when it has none)
    SELECT dump_id, db, key, key_length, length, memory_bytes,
           -- a plain key (ASCII, with a `:`) under the default `:`: cut at the last `:`, found
           -- from the end (a third cheaper than the regex)
           CASE WHEN plain_key AND $delimiters = ':' THEN left(key, strlen(key) - strpos(reverse(key), ':'))
                ELSE regexp_replace(key, '[' || delim_class($delimiters) || '][^' || delim_class($delimiters) || ']*$', '') END AS stripped
    FROM rkeys
    WHERE type = 'string' AND expire_at_ms IS NULL AND length <= $hash_max_listpack_value
), s AS (
    -- parent = regexp_extract(key, '^(.*)[delimiters][^delimiters]*$', 1) (one regex per key
    -- instead of two): the key up to its last delimiter, '' when it has none or when a newline
    -- comes before it (`.` does not match one); delim: that last delimiter
    SELECT dump_id, db, key, key_length, length, memory_bytes,
           CASE WHEN strlen(stripped) < strlen(key) AND NOT contains(stripped, chr(10)) THEN stripped ELSE '' END AS parent,
           substr(key, length(stripped) + 1, 1) AS delim
    FROM s0
), p AS (
    SELECT dump_id, db, parent, any_value(delim) AS delim,
           count(*) AS fields,
           sum(memory_bytes) AS memory_bytes,
           -- listpack: field and value entries, ~2 bytes of overhead each, 7 bytes of header
           7 + sum(key_length - strlen(parent) - 1 + length + 4) AS lp_bytes
    FROM s
    GROUP BY dump_id, db, parent
    -- parent <> '' tested after the grouping, not in a WHERE: pushed below the projection, a
    -- WHERE would run the regex twice per key
    HAVING max(strlen(parent)) > 0
       AND count(*) >= $min_fields AND count(*) <= $hash_max_listpack_entries
       AND max(key_length - strlen(parent) - 1) <= $hash_max_listpack_value
), est AS (
    SELECT *, compact_memory_estimate(strlen(parent), lp_bytes) AS estimated_bytes,
           key_pattern(parent, delimiters := $delimiters) || delim || '*' AS family
    FROM p
)
SELECT family,
       count(*) AS hashes,
       sum(fields) AS keys,
       sum(memory_bytes) AS memory_bytes,
       sum(estimated_bytes) AS estimated_bytes,
       sum(memory_bytes) - sum(estimated_bytes) AS savings_bytes,
       arg_max(parent, fields) AS example_parent
FROM est
GROUP BY family
HAVING sum(memory_bytes) > sum(estimated_bytes)
ORDER BY savings_bytes DESC, family
LIMIT (CASE WHEN $top = 0 THEN 9223372036854775807 ELSE greatest($top, 0) END)
