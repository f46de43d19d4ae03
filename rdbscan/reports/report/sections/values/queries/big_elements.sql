-- name: big_elements
-- answers: Which collections hold an element longer than big_element_bytes (a list item, a set or
--          sorted-set member, a hash field or value, a stream field or value): HGETALL, LRANGE or
--          SMEMBERS of such a key moves that element whole, however few elements it has. Per key
--          its family, type, encoding, element count, longest element and memory, longest element
--          first; every row also carries the totals over all such keys and per type.
-- params:
--   big_element_bytes (4096)   an element longer than this many bytes is big
--   top (20)                   keys listed
WITH big AS (
    SELECT dump_id, db, key, pattern, type, encoding, length, max_elem_bytes, memory_bytes
    FROM rkeys
    WHERE max_elem_bytes > $big_element_bytes AND type IN ('list', 'set', 'zset', 'hash', 'stream')
)
SELECT dump_id, db, key, pattern, type, encoding, length, max_elem_bytes, memory_bytes,
       count(*) OVER () AS total_keys,
       sum(memory_bytes) OVER () AS total_memory_bytes,
       count(*) OVER (PARTITION BY type) AS type_keys
FROM big
ORDER BY max_elem_bytes DESC, memory_bytes DESC, db, key, dump_id
LIMIT $top
