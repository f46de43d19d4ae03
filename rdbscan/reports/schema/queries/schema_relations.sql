-- name: schema_relations
-- answers: (rdbscan schema --relations) Which families hold names of other keys: over the elements
--          sampled per family (TEMP TABLE rsample: pattern, key, element; members of sets, sorted
--          sets and lists, values of hashes, read by rdbscan/rdb/sample.py), per family and target
--          family the sampled elements that are key names of the dump, the elements and keys
--          sampled, and the share. Targets holding at least min_share of a family's sampled
--          elements.
-- params:
--   min_share (0.5)   a target family must hold at least this share of the sampled elements
WITH sampled AS (
    SELECT pattern, count(*) AS elements, count(DISTINCT key) AS keys FROM rsample GROUP BY pattern
), names AS (
    SELECT DISTINCT key, pattern AS target FROM rkeys WHERE key IN (SELECT element FROM rsample)
), hit AS (
    SELECT s.pattern, n.target, count(*) AS matched
    FROM rsample AS s JOIN names AS n ON n.key = s.element
    GROUP BY ALL
)
SELECT h.pattern, h.target, h.matched, m.elements, m.keys, round(h.matched / m.elements, 4) AS share
FROM hit AS h JOIN sampled AS m USING (pattern)
WHERE h.matched >= $min_share * m.elements
ORDER BY h.pattern, h.matched DESC, h.target
