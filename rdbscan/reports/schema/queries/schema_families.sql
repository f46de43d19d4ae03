-- name: schema_families
-- answers: (rdbscan schema) One row per key family (`pattern`, see key_pattern) with what a key
--          schema documents: key count and memory, the types seen (most common first, with their
--          key counts), encodings, TTL coverage (keys with an expiry, already expired, and the range
--          and median of the TTLs still to run), element-count / string-length, longest-element and
--          per-key memory percentiles (p50, p99, max), and the family's smallest key name as example.
-- params:
--   min_keys (1)   families with fewer keys are left out
WITH by_type AS (
    -- per family and type first, so that the type histogram is its rows
    SELECT pattern, type, count(*) AS keys
    FROM rkeys
    GROUP BY pattern, type
), types AS (
    SELECT pattern,
           list({'type': type, 'keys': keys} ORDER BY keys DESC, type) AS types
    FROM by_type
    GROUP BY pattern
), fam AS (
    SELECT pattern,
           count(*) AS keys,
           sum(memory_bytes) AS memory_bytes,
           list_sort(list(DISTINCT encoding)) AS encodings,
           count(expire_at_ms) AS keys_with_ttl,
           count(*) FILTER (WHERE ttl_ms <= 0) AS keys_expired,
           min(ttl_ms) FILTER (WHERE ttl_ms > 0) AS ttl_min_ms,
           quantile_disc(ttl_ms, 0.5) FILTER (WHERE ttl_ms > 0) AS ttl_median_ms,
           max(ttl_ms) FILTER (WHERE ttl_ms > 0) AS ttl_max_ms,
           quantile_disc(length, 0.5) AS length_p50,
           quantile_disc(length, 0.99) AS length_p99,
           max(length) AS length_max,
           quantile_disc(max_elem_bytes, 0.5) AS value_bytes_p50,
           quantile_disc(max_elem_bytes, 0.99) AS value_bytes_p99,
           max(max_elem_bytes) AS value_bytes_max,
           quantile_disc(memory_bytes, 0.5) AS memory_p50,
           quantile_disc(memory_bytes, 0.99) AS memory_p99,
           max(memory_bytes) AS memory_max,
           min(key) AS example
    FROM rkeys
    GROUP BY pattern
    HAVING count(*) >= $min_keys
)
SELECT f.pattern, f.keys, f.memory_bytes,
       t.types[1].type AS type,
       t.types[1].keys / f.keys AS type_share,
       t.types,
       f.encodings, f.keys_with_ttl, f.keys_with_ttl / f.keys AS ttl_share, f.keys_expired,
       f.ttl_min_ms, f.ttl_median_ms, f.ttl_max_ms,
       f.length_p50, f.length_p99, f.length_max,
       f.value_bytes_p50, f.value_bytes_p99, f.value_bytes_max,
       f.memory_p50, f.memory_p99, f.memory_max,
       f.example
FROM fam AS f
JOIN types AS t USING (pattern)
ORDER BY f.memory_bytes DESC, f.keys DESC, f.pattern
