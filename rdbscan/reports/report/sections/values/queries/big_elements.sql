-- name: big_elements
-- answers: Which collections hold an element longer than big_element_bytes (a list item, a set or
--          sorted-set member, a hash field or value, a stream field or value): HGETALL, LRANGE or
--          SMEMBERS of such a key moves that element whole, however few elements it has. Per key
--          its family, type, encoding, element count, longest element and memory, longest element
--          first; every row also carries the totals over all such keys and per type.
-- by dump: Per dump, what its report alone says of its collections holding an element longer
--          than big_element_bytes: the keys it lists (its `top`) with its totals, over that dump's
--          keys; for a report over many dumps (values/build.py by_dump).
-- params:
--   big_element_bytes (4096)   an element longer than this many bytes is big
--   top (20)                   keys listed (by dump: per dump)
WITH big AS (
    SELECT dump_id, db, key, pattern, type, encoding, length, max_elem_bytes, memory_bytes
    FROM rkeys
    WHERE max_elem_bytes > $big_element_bytes AND type IN ('list', 'set', 'zset', 'hash', 'stream')
)
SELECT dump_id, db, key, pattern, type, encoding, length, max_elem_bytes, memory_bytes,
       count(*) OVER w AS total_keys,
       sum(memory_bytes) OVER w AS total_memory_bytes,
       count(*) OVER (PARTITION BY /*by dump: dump_id,*/ type) AS type_keys
FROM big
WINDOW w AS (/*by dump: PARTITION BY dump_id*/)
-- the totals (window functions) are over every such key, before QUALIFY keeps the top
QUALIFY row_number() OVER (/*by dump: PARTITION BY dump_id*/
                           ORDER BY max_elem_bytes DESC, memory_bytes DESC, db, key, dump_id) <= $top
ORDER BY /*by dump: dump_id,*/ max_elem_bytes DESC, memory_bytes DESC, db, key, dump_id
