-- name: chart_slots
-- answers: Keys and memory in every cluster slot that holds keys (at most 16,384 rows), for the
--          HTML report's 128 x 128 slot heat map.
-- params: none
SELECT slot, keys, memory_bytes FROM rslots ORDER BY slot
