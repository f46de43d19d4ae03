-- name: schema_sample_keys
-- answers: (rdbscan schema --relations) Which keys to sample elements from: per family, the first
--          sample_keys sets, sorted sets, lists and hashes in file order whose record is at most
--          sample_bytes long, with their dump's path and record offset (keys.file_offset).
-- params:
--   sample_keys (10)        collections sampled per family
--   sample_bytes (65536)    largest record sampled (bytes in the file)
SELECT k.dump_id, d.path, k.file_offset, k.pattern, k.key
FROM (SELECT dump_id, key, file_offset, pattern,
             row_number() OVER (PARTITION BY pattern ORDER BY dump_id, file_offset) AS n
      -- `keys`, not rkeys: the record offsets are not in rkeys
      FROM (SELECT *, key_family(key, family, delimiters := $delimiters) AS pattern FROM keys)
      WHERE dump_id IN (SELECT dump_id FROM rsnap)
        AND type IN ('set', 'zset', 'list', 'hash') AND serialized_bytes <= $sample_bytes
        AND file_offset IS NOT NULL) AS k
JOIN dumps AS d USING (dump_id)
WHERE k.n <= $sample_keys
ORDER BY k.dump_id, k.file_offset
