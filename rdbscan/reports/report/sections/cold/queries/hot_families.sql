-- name: hot_families
-- answers: Which key families are hottest by LFU counter: per family the highest counter, the
--          keys at or above hot_freq and the median counter, families with the hottest key first.
--          Empty when the dump has no LFU counters.
-- params:
--   hot_freq (100)   a key whose LFU counter is at least this is hot (the counter is logarithmic, 0-255)
--   top (20)         families returned
SELECT pattern,
       count(*) AS keys,
       max(lfu_freq) AS max_freq,
       quantile_disc(lfu_freq, 0.5) AS median_freq,
       count(*) FILTER (WHERE lfu_freq >= $hot_freq) AS hot_keys,
       sum(memory_bytes) AS memory_bytes,
       arg_min(key, (-lfu_freq, key)) AS hottest_key
FROM rkeys
WHERE lfu_freq IS NOT NULL
GROUP BY pattern
ORDER BY max_freq DESC, hot_keys DESC, memory_bytes DESC, pattern
LIMIT $top
