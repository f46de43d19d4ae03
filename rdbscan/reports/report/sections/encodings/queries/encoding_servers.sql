-- name: encoding_servers
-- answers: Which compact-encoding thresholds each dump is judged by: one row per dump, its server
--          and version, its server's defaults overridden by --config / --set (or --param here),
--          and the encoding its server gives a small hash with field TTLs (listpackex on Redis
--          7.4+, none on Valkey and older Redis).
-- params: none
SELECT * FROM rservers ORDER BY dump_id
