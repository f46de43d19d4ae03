-- name: schema_families
-- answers: (rdbscan schema) One row per key family (`pattern`, see key_pattern) with what a key
--          schema documents: key count and memory, the types seen (most common first, with their
--          key counts), encodings, TTL coverage (keys with an expiry, already expired, and the range
--          and median of the TTLs still to run), element-count / string-length, longest-element and
--          per-key memory percentiles (p50, p99, max), and the family's smallest key name as example.
-- params:
--   min_keys (1)   families with fewer keys are left out
--
-- Written to spill. DuckDB's quantile_disc holds every value of its group (seven of them over one
-- family of five million keys: 280 MB), and a list, a DISTINCT list or the smallest key name is a
-- state DuckDB cannot spill (one per family over a keyspace whose keys are each a family of their
-- own, `ratelimit:10.1.2.3`: out of memory at any limit). So:
--   - the families are counted first (a count spills): those under min_keys reach nothing else;
--   - a family of one key takes that key's own figures, with no aggregate (each percentile, the
--     maximum and the median of one value are the value);
--   - a percentile is read from the family's counts per value (`hist`, a GROUP BY that spills):
--     quantile_disc(x, q) over n values is the smallest value whose running count reaches
--     greatest(1, n - floor(n - q * n)), in doubles as DuckDB computes it (the same value as
--     quantile_disc for every n from 1 to 20,000 when this was written; tests/test_schema.py compares
--     the two over families of 1 to 60 keys).
WITH sizes AS (
    SELECT pattern, count(*) AS keys
    FROM rkeys
    GROUP BY pattern
    HAVING count(*) >= $min_keys
), single AS (
    SELECT k.pattern, 1::BIGINT AS keys, k.memory_bytes::HUGEINT AS memory_bytes,
           [{'type': k.type, 'keys': 1::BIGINT}] AS types,
           [k.encoding] AS encodings,
           (k.expire_at_ms IS NOT NULL)::BIGINT AS keys_with_ttl,
           (k.ttl_ms <= 0 IS TRUE)::BIGINT AS keys_expired,
           CASE WHEN k.ttl_ms > 0 THEN k.ttl_ms END AS ttl_min_ms,
           CASE WHEN k.ttl_ms > 0 THEN k.ttl_ms END AS ttl_median_ms,
           CASE WHEN k.ttl_ms > 0 THEN k.ttl_ms END AS ttl_max_ms,
           k.length AS length_p50, k.length AS length_p99, k.length AS length_max,
           k.max_elem_bytes AS value_bytes_p50, k.max_elem_bytes AS value_bytes_p99,
           k.max_elem_bytes AS value_bytes_max,
           k.memory_bytes AS memory_p50, k.memory_bytes AS memory_p99, k.memory_bytes AS memory_max,
           k.key AS example
    FROM rkeys AS k JOIN sizes AS s USING (pattern)
    WHERE s.keys = 1
), many AS NOT MATERIALIZED (
    -- the keys of the families of two keys or more
    SELECT k.*
    FROM rkeys AS k SEMI JOIN (SELECT pattern FROM sizes WHERE keys > 1) AS s USING (pattern)
), by_type AS (
    -- per family and type first, so that the type histogram is its rows
    SELECT pattern, type, count(*) AS keys
    FROM many
    GROUP BY pattern, type
), types AS (
    SELECT pattern,
           list({'type': type, 'keys': keys} ORDER BY keys DESC, type) AS types
    FROM by_type
    GROUP BY pattern
), hist AS (
    -- per family, measure and value: how many keys (a TTL: those still to run)
    SELECT pattern, m.measure, m.v, count(*) AS n
    FROM (SELECT pattern,
                 unnest([{'measure': 'length', 'v': length},
                         {'measure': 'value_bytes', 'v': max_elem_bytes},
                         {'measure': 'memory', 'v': memory_bytes},
                         {'measure': 'ttl', 'v': CASE WHEN ttl_ms > 0 THEN ttl_ms END}]) AS m
          FROM many)
    WHERE m.v IS NOT NULL
    GROUP BY pattern, m.measure, m.v
), running AS (
    SELECT pattern, measure, v,
           sum(n) OVER (PARTITION BY pattern, measure ORDER BY v ROWS UNBOUNDED PRECEDING) AS upto,
           sum(n) OVER (PARTITION BY pattern, measure) AS n
    FROM hist
), quantiles AS (
    SELECT pattern,
           min(v) FILTER (WHERE measure = 'length' AND upto >= greatest(1, n - floor(n::DOUBLE - 0.5::DOUBLE * n))) AS length_p50,
           min(v) FILTER (WHERE measure = 'length' AND upto >= greatest(1, n - floor(n::DOUBLE - 0.99::DOUBLE * n))) AS length_p99,
           min(v) FILTER (WHERE measure = 'value_bytes' AND upto >= greatest(1, n - floor(n::DOUBLE - 0.5::DOUBLE * n))) AS value_bytes_p50,
           min(v) FILTER (WHERE measure = 'value_bytes' AND upto >= greatest(1, n - floor(n::DOUBLE - 0.99::DOUBLE * n))) AS value_bytes_p99,
           min(v) FILTER (WHERE measure = 'memory' AND upto >= greatest(1, n - floor(n::DOUBLE - 0.5::DOUBLE * n))) AS memory_p50,
           min(v) FILTER (WHERE measure = 'memory' AND upto >= greatest(1, n - floor(n::DOUBLE - 0.99::DOUBLE * n))) AS memory_p99,
           min(v) FILTER (WHERE measure = 'ttl' AND upto >= greatest(1, n - floor(n::DOUBLE - 0.5::DOUBLE * n))) AS ttl_median_ms
    FROM running
    GROUP BY pattern
), fam AS (
    SELECT pattern,
           count(*) AS keys,
           sum(memory_bytes) AS memory_bytes,
           list_sort(list(DISTINCT encoding)) AS encodings,
           count(expire_at_ms) AS keys_with_ttl,
           count(*) FILTER (WHERE ttl_ms <= 0) AS keys_expired,
           min(ttl_ms) FILTER (WHERE ttl_ms > 0) AS ttl_min_ms,
           max(ttl_ms) FILTER (WHERE ttl_ms > 0) AS ttl_max_ms,
           max(length) AS length_max,
           max(max_elem_bytes) AS value_bytes_max,
           max(memory_bytes) AS memory_max,
           min(key) AS example
    FROM many
    GROUP BY pattern
), families AS (
    SELECT f.pattern, f.keys, f.memory_bytes, t.types, f.encodings, f.keys_with_ttl, f.keys_expired,
           f.ttl_min_ms, q.ttl_median_ms, f.ttl_max_ms,
           q.length_p50, q.length_p99, f.length_max,
           q.value_bytes_p50, q.value_bytes_p99, f.value_bytes_max,
           q.memory_p50, q.memory_p99, f.memory_max, f.example
    FROM fam AS f
    JOIN types AS t USING (pattern)
    LEFT JOIN quantiles AS q USING (pattern)
    UNION ALL BY NAME
    SELECT * FROM single
)
SELECT pattern, keys, memory_bytes,
       types[1].type AS type,
       types[1].keys / keys AS type_share,
       types,
       encodings, keys_with_ttl, keys_with_ttl / keys AS ttl_share, keys_expired,
       ttl_min_ms, ttl_median_ms, ttl_max_ms,
       length_p50, length_p99, length_max,
       value_bytes_p50, value_bytes_p99, value_bytes_max,
       memory_p50, memory_p99, memory_max,
       example
FROM families
ORDER BY memory_bytes DESC, keys DESC, pattern
