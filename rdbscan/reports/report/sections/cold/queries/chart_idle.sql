-- name: chart_idle
-- answers: How idle the keys are (LRU idle time, in powers-of-two buckets of seconds) and how
--          often they are used (LFU counter, 0-255), for the HTML report's histograms. Only keys
--          whose dump carries the value count.
-- params: none
SELECT 'idle' AS measure,
       CASE WHEN idle_seconds < 1 THEN 0 ELSE floor(log2(idle_seconds))::INTEGER + 1 END AS bucket,
       count(*) AS keys, sum(memory_bytes) AS memory_bytes
FROM rkeys WHERE idle_seconds IS NOT NULL GROUP BY ALL
UNION ALL
SELECT 'lfu', lfu_freq, count(*), sum(memory_bytes)
FROM rkeys WHERE lfu_freq IS NOT NULL GROUP BY ALL
ORDER BY measure, bucket
