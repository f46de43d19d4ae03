-- name: _rlimits
-- answers: (base relation, not a report) the compact-encoding thresholds in force, one row per
--          (type, non-compact encoding): the compact encoding it could become, the entries and
--          element-size limits and, for 7.2+ quicklists, the listpack byte limit. Created as a
--          TEMP TABLE `rlimits` when a query mentions it (the encoding_* queries).
-- params: (the defaults of the newest servers; rdbscan.reports.report.default_thresholds
--         gives those of the dump's server version, --config and --set override them)
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
SELECT * FROM (
    VALUES ('hash', 'hashtable', $compact_encoding::VARCHAR, 'hash-max-listpack-entries', $hash_max_listpack_entries::BIGINT,
            'hash-max-listpack-value', $hash_max_listpack_value::BIGINT, NULL::BIGINT),
           ('zset', 'skiplist', $compact_encoding::VARCHAR, 'zset-max-listpack-entries', $zset_max_listpack_entries::BIGINT,
            'zset-max-listpack-value', $zset_max_listpack_value::BIGINT, NULL::BIGINT),
           ('set', 'hashtable', 'listpack', 'set-max-listpack-entries', $set_max_listpack_entries::BIGINT,
            'set-max-listpack-value', $set_max_listpack_value::BIGINT, NULL::BIGINT),
           ('set', 'hashtable', 'intset', 'set-max-intset-entries', $set_max_intset_entries::BIGINT,
            'set-max-intset-entries', 9223372036854775807::BIGINT, NULL::BIGINT),
           ('list', 'linkedlist', 'ziplist', 'list-max-ziplist-entries',
            CASE WHEN $list_compact_encoding = 'ziplist' THEN $list_max_ziplist_entries ELSE 0 END::BIGINT,
            'list-max-ziplist-value', $list_max_ziplist_value::BIGINT, NULL::BIGINT),
           -- 7.2+: a quicklist converts back when one listpack would fit half the node limit
           ('list', 'quicklist', 'listpack', 'list-max-listpack-size',
            CASE WHEN $list_compact_encoding <> 'listpack' THEN 0
                 WHEN $list_max_listpack_size > 0 THEN $list_max_listpack_size // 2 ELSE 4294967295 END::BIGINT,
            'list-max-listpack-size', 4294967295::BIGINT,
            CASE WHEN $list_max_listpack_size > 0 THEN 4096
                 ELSE (4096 << (least(greatest(-$list_max_listpack_size, 1), 5) - 1)) // 2 END::BIGINT)
) AS t(type, from_encoding, target_encoding, entries_setting, max_entries, value_setting, max_value, max_lp_bytes);
