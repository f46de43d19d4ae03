-- name: streams_by_dump
-- answers: The streams that each dump's report alone lists (the `top` longest of each dump, as
--          streams.sql ranks them), with their pending entries: which dumps have streams whose
--          consumers do not acknowledge, in a report over many dumps (streams/build.py by_dump).
-- params:
--   top (10)   streams per dump, longest first
SELECT k.dump_id, k.key, s.pending, k.memory_bytes
FROM rkeys AS k
JOIN streams AS s ON s.dump_id = k.dump_id AND s.db = k.db AND s.key = k.key
WHERE k.type = 'stream'
QUALIFY row_number() OVER (PARTITION BY k.dump_id
                           ORDER BY s.length DESC, k.memory_bytes DESC, k.key, k.db) <= $top
ORDER BY k.dump_id, s.length DESC, k.memory_bytes DESC, k.key, k.db
