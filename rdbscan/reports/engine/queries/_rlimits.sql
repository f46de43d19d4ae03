-- name: _rlimits
-- answers: (base relation, not a report) the compact-encoding thresholds in force, one row per
--          (dump, type, non-compact encoding): the compact encoding it could become, the entries
--          and element-size limits and, for 7.2+ quicklists, the listpack byte limit. Each dump's
--          own server decides (TEMP TABLE `rservers`, one row per dump: its server's defaults,
--          then what --config, --set or `query --param` set for every dump). Created as a TEMP
--          TABLE `rlimits` when a query mentions it (the encoding_* queries).
-- params: (the defaults of the newest servers; rdbscan.reports.engine.thresholds.default_thresholds
--         gives those of each dump's server version, --config and --set override them)
--   hash_max_listpack_entries (512)   hash-max-listpack-entries (hash-max-ziplist-entries)
--   hash_max_listpack_value (64)      hash-max-listpack-value (hash-max-ziplist-value)
--   zset_max_listpack_entries (128)   zset-max-listpack-entries (zset-max-ziplist-entries)
--   zset_max_listpack_value (64)      zset-max-listpack-value (zset-max-ziplist-value)
--   set_max_intset_entries (512)      set-max-intset-entries (a set of integers only; no element-size limit)
--   set_max_listpack_entries (128)    set-max-listpack-entries; 0 = the server has no listpack sets (before 7.2)
--   set_max_listpack_value (64)       set-max-listpack-value
--   list_max_listpack_size (-2)       list-max-listpack-size (7.2+: a small quicklist converts back to listpack)
--   list_max_ziplist_entries (512)    list-max-ziplist-entries (servers up to 3.0, linkedlist -> ziplist)
--   list_max_ziplist_value (64)       list-max-ziplist-value (servers up to 3.0)
--   list_compact_encoding ('listpack')  compact list encoding of the server: ziplist (<= 3.0), none (3.2-7.0), listpack (7.2+)
--   compact_encoding ('listpack')     compact hash/zset encoding name: ziplist (<= 6.2) or listpack (7.0+)
CREATE OR REPLACE TEMP TABLE rlimits AS
SELECT s.dump_id, s.hash_field_ttl_encoding, t.* FROM rservers AS s, LATERAL (
    VALUES ('hash', 'hashtable', s.compact_encoding, 'hash-max-listpack-entries', s.hash_max_listpack_entries,
            'hash-max-listpack-value', s.hash_max_listpack_value, NULL::BIGINT),
           ('zset', 'skiplist', s.compact_encoding, 'zset-max-listpack-entries', s.zset_max_listpack_entries,
            'zset-max-listpack-value', s.zset_max_listpack_value, NULL::BIGINT),
           ('set', 'hashtable', 'listpack', 'set-max-listpack-entries', s.set_max_listpack_entries,
            'set-max-listpack-value', s.set_max_listpack_value, NULL::BIGINT),
           ('set', 'hashtable', 'intset', 'set-max-intset-entries', s.set_max_intset_entries,
            'set-max-intset-entries', 9223372036854775807::BIGINT, NULL::BIGINT),
           ('list', 'linkedlist', 'ziplist', 'list-max-ziplist-entries',
            CASE WHEN s.list_compact_encoding = 'ziplist' THEN s.list_max_ziplist_entries ELSE 0 END::BIGINT,
            'list-max-ziplist-value', s.list_max_ziplist_value, NULL::BIGINT),
           -- 7.2+: a quicklist converts back when one listpack would fit half the node limit
           ('list', 'quicklist', 'listpack', 'list-max-listpack-size',
            CASE WHEN s.list_compact_encoding <> 'listpack' THEN 0
                 WHEN s.list_max_listpack_size > 0 THEN s.list_max_listpack_size // 2 ELSE 4294967295 END::BIGINT,
            'list-max-listpack-size', 4294967295::BIGINT,
            CASE WHEN s.list_max_listpack_size > 0 THEN 4096
                 ELSE (4096 << (least(greatest(-s.list_max_listpack_size, 1), 5) - 1)) // 2 END::BIGINT)
) AS t(type, from_encoding, target_encoding, entries_setting, max_entries, value_setting, max_value, max_lp_bytes);
