-- name: big_elements_by_dump
-- answers: Per dump, what its report alone says of its collections holding an element longer than
--          big_element_bytes (big_elements, over that dump's keys): how many, their memory, and
--          the keys it lists (its `top`, longest element first); one GROUP BY dump_id, for a
--          report over many dumps (values/build.py by_dump).
-- params:
--   big_element_bytes (4096)   an element longer than this many bytes is big
--   top (20)                   keys listed per dump
SELECT dump_id, count(*) AS keys, sum(memory_bytes) AS memory_bytes,
       list(key ORDER BY max_elem_bytes DESC, memory_bytes DESC, db, key)[1:$top] AS listed
FROM rkeys
WHERE max_elem_bytes > $big_element_bytes AND type IN ('list', 'set', 'zset', 'hash', 'stream')
GROUP BY dump_id
ORDER BY dump_id
