-- name: ttl_herd
-- answers: Are expiries bunched (thundering herd)? The seconds and minutes in which more keys of
--          one family expire than uniform spreading of that family's expiries makes plausible.
--          Model (docs/findings.md "Expiry bunching"): a family's N expiring keys spread evenly over
--          the B seconds (minutes) from its first to its last expiry expect N / B per second
--          (minute). A moment with c keys of the family is flagged when P(Poisson(N / B) >= c) <
--          alpha / M, M = the number of (family, moment) cells tested (every B, both
--          granularities): the chance of any false flag on uniformly spread expiries stays below
--          alpha (Bonferroni). p_value is an upper bound of that tail: the first term of the
--          series over 1 - expected / (c + 1) (exact within that factor; c > expected).
--          Each dump on its own (its families, moments and M): keys of two dumps expiring in
--          the same minute are no herd of either.
-- columns: ..., dump_id (the dump whose keys they are); listed: among the `top` of all dumps
--          (the section's table); dump_listed: among the `top` of its dump (a dump's herds over
--          more than MAX_DUMPS_ALONE dumps, findings.grouped): the rows are either or both.
-- params:
--   top (10)           moments per granularity, most keys first
--   min_keys (5)       a moment is listed only when at least this many keys of the family expire in it
--   alpha (0.01)       significance level for the whole dump (before the correction for M)
--   delimiters (':')   characters that separate key segments (for the families)
-- e is read more than once: NOT MATERIALIZED, to scan again rather than hold the keys
WITH e AS NOT MATERIALIZED (
    SELECT dump_id, key_family(key, family, delimiters := $delimiters) AS pattern, expire_at_ms, memory_bytes
    FROM rkeys WHERE expire_at_ms IS NOT NULL AND ttl_ms > 0
), seconds AS (
    SELECT dump_id, pattern, expire_at_ms // 1000 AS bucket, count(*) AS keys, sum(memory_bytes) AS memory_bytes
    FROM e GROUP BY ALL
), fam_all AS (
    -- per dump and family: its expiring keys, and the seconds and minutes from its first to its
    -- last expiry (a minute is 60 whole seconds)
    SELECT dump_id, pattern, sum(keys) AS family_keys,
           max(bucket) - min(bucket) + 1 AS seconds_span,
           max(bucket // 60) - min(bucket // 60) + 1 AS minutes_span
    FROM seconds GROUP BY ALL
), tested AS (
    SELECT dump_id, sum(seconds_span + minutes_span)::DOUBLE AS m, sum(family_keys)::BIGINT AS expiring
    FROM fam_all GROUP BY dump_id
), fam AS (
    -- the families that can hold a moment of min_keys keys: the others count in M only (a
    -- keyspace can hold a family per key: `ratelimit:10.1.2.3`)
    SELECT 'second' AS granularity, dump_id, pattern, family_keys, seconds_span AS span
    FROM fam_all WHERE family_keys >= $min_keys
    UNION ALL
    SELECT 'minute', dump_id, pattern, family_keys, minutes_span
    FROM fam_all WHERE family_keys >= $min_keys
), cells AS (
    -- the minutes from the seconds: two groupings of every expiring key, which DuckDB runs at
    -- once, each with its own fixed share of memory, did not fit in the report's memory limit
    -- (connections.py)
    SELECT 'second' AS granularity, 1000 AS width_ms, dump_id, pattern, bucket, keys, memory_bytes
    FROM seconds JOIN fam USING (dump_id, pattern)
    WHERE fam.granularity = 'second'
    UNION ALL
    SELECT 'minute', 60000, dump_id, pattern, bucket // 60, sum(keys)::BIGINT, sum(memory_bytes)
    FROM seconds JOIN fam USING (dump_id, pattern)
    WHERE fam.granularity = 'minute'
    GROUP BY dump_id, pattern, bucket // 60
), scored AS (
    SELECT c.granularity, c.dump_id, c.bucket * c.width_ms AS moment_ms, c.pattern, c.keys, c.memory_bytes,
           f.family_keys, f.family_keys / f.span AS expected_keys,
           CASE WHEN c.keys + 1 > f.family_keys / f.span
                THEN least(0, -(f.family_keys / f.span) + c.keys * ln(f.family_keys / f.span)
                              - lgamma(c.keys + 1) - ln(1 - (f.family_keys / f.span) / (c.keys + 1)))
                ELSE 0 END AS ln_p
    FROM cells AS c JOIN fam AS f USING (granularity, dump_id, pattern)
    WHERE c.keys >= $min_keys
)
SELECT granularity, moment_ms, moment, pattern, keys, expected_keys, ratio_to_expected, p_value,
       log10_p_value, p_threshold, family_keys, memory_bytes, share_of_expiring, dump_id,
       rank_all <= $top AS listed, rank_dump <= $top AS dump_listed
FROM (
    SELECT s.granularity, s.moment_ms, make_timestamp(s.moment_ms * 1000) AS moment, s.pattern, s.keys,
           s.expected_keys, s.keys / s.expected_keys AS ratio_to_expected, exp(s.ln_p) AS p_value,
           s.ln_p / ln(10) AS log10_p_value,
           $alpha / t.m AS p_threshold, s.family_keys, s.memory_bytes, s.keys / t.expiring AS share_of_expiring,
           s.dump_id,
           row_number() OVER (PARTITION BY s.granularity ORDER BY s.keys DESC, s.moment_ms, s.pattern, s.dump_id) AS rank_all,
           row_number() OVER (PARTITION BY s.granularity, s.dump_id ORDER BY s.keys DESC, s.moment_ms, s.pattern) AS rank_dump
    FROM scored AS s JOIN tested AS t USING (dump_id)
    WHERE s.ln_p < ln($alpha) - ln(t.m) AND $top > 0
)
WHERE rank_all <= $top OR rank_dump <= $top
ORDER BY granularity DESC, keys DESC, moment_ms, pattern, dump_id
