-- name: slot_summary
-- answers: How evenly keys spread over the 16384 cluster slots: slots used, keys per used slot
--          (average and maximum), and, when the dump announced per-slot counts (opcode 244 or
--          Valkey aux slot-info), how many slots disagree with the keys actually read.
-- params: none
WITH s AS (SELECT slot, keys, memory_bytes FROM rslots),
announced AS (
    SELECT slot, sum(keys) AS keys FROM slot_info WHERE dump_id IN (SELECT dump_id FROM rsnap) GROUP BY slot
)
SELECT (SELECT count(*) FROM s) AS slots_used,
       (SELECT sum(keys) FROM s) AS keys,
       (SELECT avg(keys) FROM s) AS avg_keys_per_slot,
       (SELECT max(keys) FROM s) AS max_keys_in_slot,
       (SELECT max(memory_bytes) FROM s) AS max_memory_in_slot,
       (SELECT count(*) FROM announced) AS announced_slots,
       (SELECT count(*) FROM announced AS a FULL JOIN s USING (slot)
         WHERE (SELECT count(*) FROM announced) > 0 AND coalesce(a.keys, 0) <> coalesce(s.keys, 0)) AS announced_mismatches
