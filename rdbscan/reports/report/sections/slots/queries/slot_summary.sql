-- name: slot_summary
-- answers: How evenly keys spread over the 16384 cluster slots: slots used, keys per used slot
--          (average and maximum), and, when the dump announced per-slot counts (opcode 244 or
--          Valkey aux slot-info), how many slots disagree with the keys actually read: per dump,
--          over the dumps that announced counts (a dump's announcement speaks for itself only).
-- params: none
-- columns: ..., announced_mismatches (slots of any dump that disagree), mismatch_dumps (the ids
--   of the dumps with such slots), mismatches_by_dump (dump_id and slots of each of those, for
--   a report over many dumps: slots/build.py by_dump)
WITH s AS (SELECT slot, keys, memory_bytes FROM rslots),
announced AS (
    SELECT dump_id, slot, sum(keys) AS keys FROM slot_info
    WHERE dump_id IN (SELECT dump_id FROM rsnap) GROUP BY dump_id, slot
),
actual AS (
    SELECT dump_id, slot, count(*) AS keys FROM rkeys
    WHERE dump_id IN (SELECT DISTINCT dump_id FROM announced) GROUP BY dump_id, slot
),
mismatch AS (
    SELECT dump_id FROM announced AS a FULL JOIN actual AS k USING (dump_id, slot)
    WHERE coalesce(a.keys, 0) <> coalesce(k.keys, 0)
)
SELECT (SELECT count(*) FROM s) AS slots_used,
       (SELECT sum(keys) FROM s) AS keys,
       (SELECT avg(keys) FROM s) AS avg_keys_per_slot,
       (SELECT max(keys) FROM s) AS max_keys_in_slot,
       (SELECT max(memory_bytes) FROM s) AS max_memory_in_slot,
       (SELECT count(*) FROM announced) AS announced_slots,
       (SELECT count(*) FROM mismatch) AS announced_mismatches,
       (SELECT list(DISTINCT dump_id ORDER BY dump_id) FROM mismatch) AS mismatch_dumps,
       (SELECT list({'dump_id': dump_id, 'slots': n} ORDER BY dump_id)
        FROM (SELECT dump_id, count(*) AS n FROM mismatch GROUP BY dump_id)) AS mismatches_by_dump
