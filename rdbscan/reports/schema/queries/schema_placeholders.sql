-- name: schema_placeholders
-- answers: (rdbscan schema) For each placeholder segment of each family (a segment key_pattern
--          turned into {id} or {date}), what every key's segment at that position holds: whether all
--          are integers, epoch timestamps (seconds or milliseconds between 2000 and 2100), dates,
--          UUIDs or hexadecimal. `rdbscan schema` types the placeholder from these ({id}, {ts},
--          {date}, {uuid}, {hex}, else {*}). Hashtag braces around a placeholder ({{id}}) are not
--          part of the value. Segments end at a delimiter or at `#` (split-key
--          families, as in key_pattern).
-- params: none
WITH seg AS (
    SELECT pattern,
           generate_subscripts(string_split_regex(key, '[' || delim_class($delimiters || '#') || ']'), 1) AS position,
           unnest(string_split_regex(key, '[' || delim_class($delimiters || '#') || ']')) AS value,
           unnest(string_split_regex(pattern, '[' || delim_class($delimiters || '#') || ']')) AS fseg,
           len(string_split_regex(key, '[' || delim_class($delimiters || '#') || ']'))
             = len(string_split_regex(pattern, '[' || delim_class($delimiters || '#') || ']')) AS aligned
    FROM rkeys
    WHERE contains(pattern, '{id}') OR contains(pattern, '{date}')
), vals AS (
    SELECT pattern, position, fseg,
           CASE WHEN starts_with(fseg, '{{') AND starts_with(value, '{') THEN value[2:] ELSE value END AS v0,
           aligned
    FROM seg
    WHERE fseg IN ('{id}', '{date}', '{{id}', '{{date}', '{id}}', '{date}}', '{{id}}', '{{date}}')
), typed AS (
    SELECT pattern, position, fseg, aligned,
           CASE WHEN ends_with(fseg, '}}') AND ends_with(v0, '}') THEN v0[:-2] ELSE v0 END AS v
    FROM vals
)
SELECT pattern, position, fseg AS segment,
       count(*) AS keys,
       bool_and(aligned) AS aligned,
       bool_and(regexp_full_match(v, '[0-9]+')) AS all_int,
       bool_and(regexp_full_match(v, '[0-9]{10}|[0-9]{13}')
                AND coalesce(CASE WHEN len(v) = 10 THEN try_cast(v AS BIGINT) ELSE try_cast(v AS BIGINT) // 1000 END, 0)
                    BETWEEN 946684800 AND 4102444800) AS all_ts,
       bool_and(regexp_full_match(v, '(?:19|20)[0-9]{2}-?(?:0[1-9]|1[0-2])(?:-?(?:0[1-9]|[12][0-9]|3[01]))?(?:[T ][0-9]{2})?')) AS all_date,
       bool_and(regexp_full_match(v, '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}')) AS all_uuid,
       bool_and(regexp_full_match(v, '[0-9a-fA-F]+')) AS all_hex
FROM typed
GROUP BY pattern, position, fseg
ORDER BY pattern, position
