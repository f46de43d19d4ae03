-- name: overview_dumps
-- answers: Which dumps are analysed: server and version, RDB version, snapshot time (aux ctime),
--          used-mem at save and its gap to the estimate with keyspace overhead, checksum status, completeness, parse time and speed,
--          how the input arrived (compression, framing), bytes after the RDB, keys left out by --skip-bad,
--          why a dump was not read to its end (damage, or a limit of rdbscan: a dump newer than it),
--          Redis 8.10 hash templates and their memory.
-- params: none
SELECT d.dump_id, d.path, d.server, d.server_version, d.rdb_version, d.magic, d.bits,
       d.ctime, d.snapshot_time, s.snapshot_ms, s.snapshot_source, d.used_mem,
       d.checksum, d.complete, d.error, d.error_kind, d.newer_than, d.keys, d.expires, d.memory_bytes, d.memory_total_bytes,
       d.used_mem - d.memory_total_bytes AS used_mem_gap,
       d.file_size, d.bytes_read, d.parse_seconds,
       round(d.bytes_read / nullif(d.parse_seconds, 0)) AS bytes_per_second,
       round(d.keys / nullif(d.parse_seconds, 0)) AS keys_per_second,
       len(coalesce(d.functions, [])) AS functions,
       d.slot_info_records,
       d.compression, d.framing, d.tail_bytes, d.skipped_keys, d.memory_profile, d.memory_model,
       d.hash_templates, d.hash_template_fields, d.hash_template_bytes
FROM dumps AS d
JOIN rsnap AS s USING (dump_id)
ORDER BY d.dump_id
