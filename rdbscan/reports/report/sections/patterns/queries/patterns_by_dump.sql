-- name: patterns_by_dump
-- answers: The family holding the most memory in each dump, with its share of that dump's memory:
--          the first row of `patterns` in each dump's report alone (memory, then keys, then name),
--          in a report over many dumps (patterns/build.py by_dump).
-- params: none
SELECT dump_id, pattern, keys, memory_bytes, memory_share
FROM (
    SELECT dump_id, pattern, keys, memory_bytes,
           memory_bytes / nullif(sum(memory_bytes) OVER (PARTITION BY dump_id), 0) AS memory_share
    FROM rfamilies_by_dump
    QUALIFY row_number() OVER (PARTITION BY dump_id ORDER BY memory_bytes DESC, keys DESC, pattern) = 1
)
ORDER BY dump_id
