-- name: big_keys
-- answers: Which keys are over a big-key threshold, how severe, and which of them carry a TTL (their
--          expiry frees them in one blocking step unless lazyfree-lazy-expire is on). A dense
--          HyperLogLog (a 12,304-byte string, its fixed size) is no big key.
-- by dump: Per dump, the big keys its report alone lists (its `top`, in the same order) with
--          its totals: for a report over many dumps (big_keys/build.py by_dump), whose findings
--          name the same example keys as each dump's report alone.
-- params:
--   string_bytes (10240)                  string value above this many bytes (STRLEN): big-string
--   string_critical_bytes (1048576)       string value above this many bytes: big-string-critical
--   collection_length (5000)              collection above this many elements: big-collection
--   collection_critical_length (100000)   collection above this many elements: big-collection-critical
--   collection_memory (52428800)          collection above this many bytes of memory: big-collection-memory
--   top (20)                              rows returned (by dump: per dump), critical keys first, then largest memory; 0 = all
WITH flagged AS (
    SELECT dump_id, db, key, type, encoding, length, memory_bytes, expire_at_ms, ttl_ms, pattern,
           -- not a dense HyperLogLog: 12,304 bytes by design (HLL_DENSE_SIZE in hyperloglog.c),
           -- nothing to split
           type = 'string' AND length > $string_bytes AND length <> 12304 AS big_string,
           type = 'string' AND length > $string_critical_bytes AS big_string_critical,
           type IN ('list', 'set', 'zset', 'hash', 'stream') AND length > $collection_length AS big_collection,
           type IN ('list', 'set', 'zset', 'hash', 'stream') AND length > $collection_critical_length AS big_collection_critical,
           type IN ('list', 'set', 'zset', 'hash', 'stream') AND memory_bytes > $collection_memory AS big_collection_memory
    FROM rkeys
), big AS (
    SELECT *,
           string_split(concat_ws(',',
               CASE WHEN big_string THEN 'big-string' END,
               CASE WHEN big_string_critical THEN 'big-string-critical' END,
               CASE WHEN big_collection THEN 'big-collection' END,
               CASE WHEN big_collection_critical THEN 'big-collection-critical' END,
               CASE WHEN big_collection_memory THEN 'big-collection-memory' END), ',') AS rules,
           CASE WHEN big_string_critical OR big_collection_critical THEN 'critical' ELSE 'warning' END AS severity
    FROM flagged
    WHERE big_string OR big_collection OR big_collection_memory
)
SELECT dump_id, db, key, type, encoding, length, memory_bytes, severity, rules,
       expire_at_ms IS NOT NULL AS has_ttl, expire_at_ms, ttl_ms, pattern,
       -- totals over every big key (window functions, before QUALIFY keeps the top)
       count(*) OVER w AS total_keys,
       count(CASE WHEN severity = 'critical' THEN 1 END) OVER w AS total_critical,
       count(expire_at_ms) OVER w AS total_with_ttl,
       count(CASE WHEN type = 'string' THEN 1 END) OVER w AS total_strings,
       sum(memory_bytes) OVER w AS total_memory,
       coalesce(sum(memory_bytes) FILTER (WHERE severity = 'critical') OVER w, 0) AS total_critical_memory
FROM big
WINDOW w AS (/*by dump: PARTITION BY dump_id*/)
-- critical first: a top-N by memory alone can leave out every critical key (a 100,001-element
-- set of small integers is smaller than many 20 KB strings)
QUALIFY $top <= 0 OR row_number() OVER (/*by dump: PARTITION BY dump_id*/ ORDER BY severity = 'critical' DESC,
                                        memory_bytes DESC, length DESC, key, dump_id, db) <= $top
ORDER BY /*by dump: dump_id,*/ severity = 'critical' DESC, memory_bytes DESC, length DESC, key, dump_id, db
