-- name: encoding_candidates_by_dump
-- answers: Per dump, what its report alone says of its non-compact keys small enough to be
--          compact (rcandidates: by the thresholds of the dump's own server): how many, the
--          estimated saving, and the keys encoding_candidates lists for it (its `top` by saving,
--          in that order); one GROUP BY dump_id, for a report over many dumps
--          (encodings/build.py by_dump).
-- params:
--   from _rlimits.sql: *
--   top (20)   keys listed per dump, largest saving first; 0 = all
WITH c AS (
    SELECT dump_id, db, key, memory_bytes - estimated_bytes AS saving,
           row_number() OVER (PARTITION BY dump_id
                              ORDER BY memory_bytes - estimated_bytes DESC, key, db) AS rn
    FROM rcandidates
)
SELECT dump_id, count(*) AS keys, sum(greatest(saving, 0)) AS savings_bytes,
       list(key ORDER BY greatest(saving, 0) DESC, key, db) FILTER (WHERE $top = 0 OR rn <= $top) AS listed
FROM c
GROUP BY dump_id
ORDER BY dump_id
