-- name: _dkeys
-- answers: (base relation, not a diff part) the keys of both snapshots, one row per key and side
--          ('old' or 'new'), with the key family and the TTL at the side's snapshot time. A view
--          over `dsrc` (the keys of the dumps of each side, from the databases attached read-only)
--          and `dsnap` (one row per dump: side, dump_id, snapshot_ms, used_mem), which
--          rdbscan.diff creates. Also `dspan`: the snapshot times of both sides and the days
--          between them (NULL when either time is not known, i.e. taken at load time).
-- params:
--   delimiters (':')  characters that separate key segments (for `pattern`)
CREATE OR REPLACE TEMP VIEW dkeys AS
SELECT side, dump_id, db, key, key_raw,
       key_family(key, family, delimiters := $delimiters) AS pattern,
       type, encoding, length, max_elem_bytes, serialized_bytes,
       coalesce(memory_bytes, 0) AS memory_bytes,
       expire_at_ms,
       expire_at_ms - snapshot_ms AS ttl_ms,
       int_members
FROM dsrc;

CREATE OR REPLACE TEMP VIEW dspan AS
SELECT min(snapshot_ms) FILTER (WHERE side = 'old') AS old_snapshot_ms,
       min(snapshot_ms) FILTER (WHERE side = 'new') AS new_snapshot_ms,
       CASE WHEN count(*) FILTER (WHERE snapshot_source = 'now') = 0
            THEN (min(snapshot_ms) FILTER (WHERE side = 'new')
                  - min(snapshot_ms) FILTER (WHERE side = 'old')) / 86400000.0 END AS days
FROM dsnap;
