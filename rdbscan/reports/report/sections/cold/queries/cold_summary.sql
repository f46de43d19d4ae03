-- name: cold_summary
-- answers: Does the dump carry LRU idle times or LFU counters (written only under an LRU/LFU
--          maxmemory-policy), and if so how many keys and how much memory are cold: idle longer
--          than idle_days, or an LFU counter at most max_freq.
-- by dump: Per dump, what cold_summary counts in its report alone (whether it carries LRU idle
--          times or LFU counters, its cold keys, their memory, those without TTL): one GROUP BY
--          dump_id, for a report over many dumps (cold/build.py by_dump).
-- params:
--   idle_days (30)   a key idle longer than this many days (at snapshot time) is cold
--   max_freq (0)     a key whose LFU counter is at most this is cold
SELECT /*by dump: dump_id,*/ count(*) AS keys,
       count(idle_seconds) AS keys_with_idle,
       count(lfu_freq) AS keys_with_freq,
       count(*) FILTER (WHERE idle_seconds > $idle_days * 86400) AS cold_idle_keys,
       coalesce(sum(memory_bytes) FILTER (WHERE idle_seconds > $idle_days * 86400), 0) AS cold_idle_memory,
       count(*) FILTER (WHERE lfu_freq <= $max_freq) AS cold_freq_keys,
       coalesce(sum(memory_bytes) FILTER (WHERE lfu_freq <= $max_freq), 0) AS cold_freq_memory,
       count(*) FILTER (WHERE (idle_seconds > $idle_days * 86400 OR lfu_freq <= $max_freq)
                          AND expire_at_ms IS NULL) AS cold_without_ttl,
       max(idle_seconds) AS max_idle_seconds,
       median(idle_seconds) AS median_idle_seconds,
       min(lfu_freq) AS min_freq,
       median(lfu_freq) AS median_freq,
       max(lfu_freq) AS max_freq_seen
FROM rkeys
/*by dump: GROUP BY dump_id ORDER BY dump_id*/
