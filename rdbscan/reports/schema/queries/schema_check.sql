-- name: schema_check
-- answers: (rdbscan report --schema) Where the keys break the key schema, per check, declared
--          family and key family: keys matching no declared pattern (undocumented), keys of another
--          type than declared, keys without an expiry where ttl = "required" or with one where
--          ttl = "none", TTLs over max_ttl, keys over max_length / max_value_bytes / max_memory,
--          families over max_family_memory, and declared families no key matches. Reads rschema_keys
--          (every key with the declared family it belongs to, `rule`, NULL for none) and
--          rschema_rules (the declared families), which `report --schema` creates from the file.
-- params: none
-- columns: check, rule (position of the declared family in the file), family (the keys' family,
--   key_pattern), found (the type found, for `type`), keys, memory_bytes, measured (the largest
--   value over the limit: TTL ms, length, bytes, memory; the family's memory for max-family-memory),
--   example (the smallest key name).
WITH k AS (
    SELECT k.*, r.type AS declared_type, r.ttl, r.max_ttl_ms, r.max_length, r.max_value_bytes, r.max_memory
    FROM rschema_keys AS k
    LEFT JOIN rschema_rules AS r USING (rule)
), per_key AS (
    SELECT 'undocumented' AS "check", rule, family, NULL AS found, key, memory_bytes, NULL::BIGINT AS measured
    FROM k WHERE rule IS NULL
    UNION ALL
    SELECT 'type', rule, family, type, key, memory_bytes, NULL
    FROM k WHERE declared_type IS NOT NULL AND type <> declared_type
    UNION ALL
    SELECT 'ttl-required', rule, family, NULL, key, memory_bytes, NULL
    FROM k WHERE ttl = 'required' AND expire_at_ms IS NULL
    UNION ALL
    SELECT 'ttl-none', rule, family, NULL, key, memory_bytes, ttl_ms
    FROM k WHERE ttl = 'none' AND expire_at_ms IS NOT NULL
    UNION ALL
    SELECT 'max-ttl', rule, family, NULL, key, memory_bytes, ttl_ms
    FROM k WHERE ttl_ms > max_ttl_ms
    UNION ALL
    SELECT 'max-length', rule, family, NULL, key, memory_bytes, length
    FROM k WHERE length > max_length
    UNION ALL
    SELECT 'max-value-bytes', rule, family, NULL, key, memory_bytes, max_elem_bytes
    FROM k WHERE max_elem_bytes > max_value_bytes
    UNION ALL
    SELECT 'max-memory', rule, family, NULL, key, memory_bytes, memory_bytes
    FROM k WHERE memory_bytes > max_memory
), by_rule AS (
    SELECT rule, count(*) AS keys, sum(memory_bytes) AS memory_bytes, min(key) AS example
    FROM rschema_keys
    WHERE rule IS NOT NULL
    GROUP BY rule
)
SELECT "check", rule, family, found, count(*) AS keys, sum(memory_bytes) AS memory_bytes,
       max(measured) AS measured, min(key) AS example
FROM per_key
GROUP BY ALL
UNION ALL
SELECT 'max-family-memory', r.rule, NULL, NULL, b.keys, b.memory_bytes, b.memory_bytes, b.example
FROM rschema_rules AS r
JOIN by_rule AS b USING (rule)
WHERE b.memory_bytes > r.max_family_memory
UNION ALL
SELECT 'no-keys', r.rule, NULL, NULL, 0, 0, NULL, NULL
FROM rschema_rules AS r
WHERE r.rule NOT IN (SELECT rule FROM by_rule)
ORDER BY "check", memory_bytes DESC, keys DESC, rule, family, found
