-- name: _tkeys
-- answers: (base relation, not a trend part) the keys of every snapshot `rdbscan trend` follows,
--          with the family. A view over `tsrc` (the keys of the attached database joined with
--          `tsnap`: one row per dump with its series (one per instance), snapshot_id and `days`,
--          the time since the series' first snapshot), which rdbscan.reports.trend creates.
-- params:
--   delimiters (':')  characters that separate key segments (for `pattern`)
CREATE OR REPLACE TEMP VIEW tkeys AS
SELECT series, snapshot_id, days,
       key_family(key, family, delimiters := $delimiters) AS pattern,
       coalesce(memory_bytes, 0) AS memory_bytes,
       expire_at_ms
FROM tsrc
