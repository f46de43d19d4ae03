"""DuckDB macros created in every database rdbscan writes (and in databases `report` opens).

They exist for ad-hoc SQL as much as for the bundled queries, so each one is pure SQL: vectorized,
no Python UDF, usable from any DuckDB client once the database has been written by rdbscan.
docs/queries.md ("Macros") documents them; keep both in step.

`key_pattern` avoids lambdas (`list_transform`) so it runs on every DuckDB >= 1.0: it wraps each
delimiter in a private-use marker (U+E000), so that every segment is bounded by a marker or by the
start/end of the key, then rewrites whole segments with anchored `regexp_replace` passes.  Checks
that need two conditions at once (long AND contains a digit), which RE2 cannot say without
lookahead, first tag candidate segments with a second marker (U+E001), then rewrite only tagged
segments that also satisfy the second condition, then drop the tags.  Those passes cost about a
microsecond per key; keys whose segments are plain words and ids (most of them) take a fast path
of one full-match test and one replacement with the same result (see _PLAIN_SEG below).
"""

from __future__ import annotations

# Segment boundary and candidate tag; private-use code points do not occur in real key names.
_M = "\ue000"
_T = "\ue001"

# A segment may be wrapped in hashtag braces: `{user:42}` splits into `{user` and `42}`; the
# brace is kept so the family reads `{user:{id}}:profile`.
_SEG_START = f"(^|{_M})(\\{{?)"
_SEG_END = f"(\\}}?)({_M}|$)"


def _whole(segment_re: str, placeholder: str) -> str:
    """A regexp_replace pass turning a whole segment matching segment_re into placeholder."""
    return f"'{_SEG_START}(?:{segment_re}){_SEG_END}', '\\1\\2{placeholder}\\3\\4', 'g'"


_DATE = (
    r"(?:19|20)[0-9]{2}-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12][0-9]|3[01]))?(?:[T ][0-9]{2})?"
    r"|(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
)
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_NUMBER = r"[-+]?[0-9]+(?:\.[0-9]+)?"
# An IPv4 address, four numbers 0-255 without leading zeros (`ratelimit:10.1.2.3`): {ip} in a
# family, and the placeholder {ip} of a key schema (reports/schema/spec.py).
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
IPV4 = f"{_OCTET}(?:\\.{_OCTET}){{3}}"
# An e-mail address (`user:alice@example.com`): {email}.  Its local part may hold no digit nor
# '-', so '@' marks a segment for the passes as a digit or '-' does (_PLAIN_SEG, _family).
EMAIL = "[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\\.)+[A-Za-z]{2,}"
_HEX = "[0-9a-fA-F]"
_TOKEN = "[A-Za-z0-9_+/=-]"


# Fast paths of key_pattern (same result as the passes, in one regexp_replace).  A segment with
# no digit, no '-' and no '@' is left unchanged by every pass: each placeholder needs a digit, a
# '-' for a UUID or an '@' for an e-mail address (a key holding '@' takes no fast path).  When
# the other segments are all ids that become {id} whatever pass takes them, every run of characters holding a digit or '-' (between delimiters and braces) is exactly one
# of those ids, and one replacement of such runs gives the family.
#   1. integers, but 8 digits that read as a compact date: the runs are digit runs.
#   2. also UUIDs and hex of 8+ characters holding a digit (session ids, hashes), when the key has
#      no run of 8 digits that reads as a compact date (one regex) and no delimiter is a letter
#      or '-' (which would split such ids).
# Neither for delimiters that are digits, braces or markers: segments and runs would not coincide.
_PLAIN_SEG = f"[^0-9\\-@{_M}{_T}' || delim_class(delimiters) || ']*"
# 8 digits that are not a compact date (the passes' _DATE: (19|20)YY, month 01-12, day 01-31):
# another first two digits, or a month outside 01-12, or a valid month and a day outside 01-31.
_DATE8 = "(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
_NON_DATE8 = (
    "(?:[03-9][0-9]|1[0-8]|2[1-9])[0-9]{6}"
    "|(?:19|20)[0-9]{2}(?:00|1[3-9]|[2-9][0-9])[0-9]{2}"
    "|(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:00|3[2-9]|[4-9][0-9])"
)
_FAST_SEG = _PLAIN_SEG + f"|\\{{?(?:[0-9]{{1,7}}|[0-9]{{9,}}|{_NON_DATE8})\\}}?"
# hex of 8+ characters with a digit: i hex characters, a digit, at least 7 - i more (i < 7), or
# 7+ hex characters before the digit
_HEX_ID = "|".join(
    [f"{_HEX}{{{i}}}[0-9]{_HEX}{{{7 - i},}}" for i in range(7)] + [f"{_HEX}{{7,}}[0-9]{_HEX}*"]
)
_ID_SEG = _PLAIN_SEG + f"|\\{{?(?:[0-9]+|{_UUID}|{_HEX_ID})\\}}?"


def _segments(seg: str) -> str:
    """A regexp_full_match pattern (SQL expression) for a key made of segments matching seg."""
    return f"'(?:{seg})(?:[' || delim_class(delimiters) || '](?:{seg}))*'"


def _key_pattern_passes_sql() -> str:
    """key_pattern without its fast paths: the regexp_replace passes (tests compare both)."""
    s = f"regexp_replace(key, '([' || delim_class(delimiters) || '])', '{_M}\\1{_M}', 'g')"
    s = f"regexp_replace({s}, {_whole(_DATE, '{date}')})"
    s = f"regexp_replace({s}, {_whole(_UUID, '{id}')})"
    s = f"regexp_replace({s}, {_whole(IPV4, '{ip}')})"
    s = f"regexp_replace({s}, {_whole(EMAIL, '{email}')})"
    s = f"regexp_replace({s}, {_whole(_NUMBER, '{id}')})"
    # long hex (>= 8 chars) that contains a digit: session ids, object ids, hashes
    s = f"regexp_replace({s}, '{_SEG_START}({_HEX}{{8,}}){_SEG_END}', '\\1\\2{_T}\\3{_T}\\4\\5', 'g')"
    s = f"regexp_replace({s}, '{_T}{_HEX}*[0-9]{_HEX}*{_T}', '{{id}}', 'g')"
    s = f"replace({s}, '{_T}', '')"
    # random tokens: >= 16 chars of [A-Za-z0-9_+/=-] with both a digit and a letter
    s = f"regexp_replace({s}, '{_SEG_START}({_TOKEN}{{16,}}){_SEG_END}', '\\1\\2{_T}\\3{_T}\\4\\5', 'g')"
    s = (
        f"regexp_replace({s}, '{_T}(?:{_TOKEN}*[0-9]{_TOKEN}*[A-Za-z]{_TOKEN}*"
        f"|{_TOKEN}*[A-Za-z]{_TOKEN}*[0-9]{_TOKEN}*){_T}', '{{id}}', 'g')"
    )
    return f"replace(replace({s}, '{_T}', ''), '{_M}', '')"


def _key_pattern_sql() -> str:
    """key_pattern: the fast paths (see _PLAIN_SEG) first, the passes for the other keys only."""
    return (
        f"CASE WHEN NOT regexp_matches(delimiters, '[0-9{{}}{_M}{_T}]') "
        f"AND regexp_full_match(key, {_segments(_FAST_SEG)}) "
        f"THEN regexp_replace(key, '[0-9]+', '{{id}}', 'g') "
        f"WHEN NOT regexp_matches(delimiters, '[0-9A-Za-z{{}}{_M}{_T}-]') "
        f"AND NOT regexp_matches(key, '(?:^|[^0-9])(?:{_DATE8})(?:[^0-9]|$)') "
        f"AND regexp_full_match(key, {_segments(_ID_SEG)}) "
        f"THEN regexp_replace(key, '[^{{}}' || delim_class(delimiters) || ']*[0-9-][^{{}}' || delim_class(delimiters) || ']*', '{{id}}', 'g') "
        f"ELSE {_key_pattern_passes_sql()} END"
    )


# Split-key families (`uid#0#0 ... uid#999#99`, `video_info#olympic#2020-08-29#1`): a key split
# into shards numbers them in `#` segments, so key_pattern treats `#` as a segment boundary
# whatever the delimiters, and the shards of one logical key share a family.  The family rule's
# other copies follow: tests/family_reference.py, `_family` in rdbscan/db/_batch.pyx,
# rdbscan/reports/schema.py (segment_delimiters) and queries/values_split_keys.sql.
SPLIT_MARK = "#"


def segment_delimiters(delimiters: str) -> str:
    """The characters that end a segment of a family: the delimiters and SPLIT_MARK."""
    return delimiters if SPLIT_MARK in delimiters else delimiters + SPLIT_MARK


def _split_marked(sql: str) -> str:
    """key_pattern's body with SPLIT_MARK added to the delimiters it splits segments at."""
    return sql.replace("delim_class(delimiters)", f"delim_class(delimiters || '{SPLIT_MARK}')")


MACROS: list[str] = [
    # Body of a regex character class holding each delimiter character, escaped (`]`, `\`, `^`, `-`).
    "CREATE OR REPLACE MACRO delim_class(delimiters) AS "
    "regexp_replace(delimiters, '([\\]\\[\\\\^-])', '\\\\\\1', 'g')",
    # Is the key lowercase words (a-z, 0-9, `_`) joined by `delimiter`, starting with a letter,
    # with at least one delimiter (`user:1000:profile`)?  Such a key breaks none of the naming
    # rules' character rules; the loader stores the answer for `:` in keys.plain_key.
    "CREATE OR REPLACE MACRO is_plain_key(key, delimiter := ':') AS regexp_full_match(key, "
    "'[a-z][a-z0-9_]*(?:[' || delim_class(delimiter) || '][a-z0-9_]*)+')",
    # Family of a key: id-like segments (numbers, dates, UUIDs, long hex, random tokens, IPv4 and
    # e-mail addresses) replaced by {id} / {date} / {ip} / {email}.  key_pattern('user:1000:profile') = 'user:{id}:profile'.
    # `#` always bounds segments too (SPLIT_MARK): `uid#0#7` = 'uid#{id}#{id}'.
    f"CREATE OR REPLACE MACRO key_pattern(key, delimiters := ':') AS {_split_marked(_key_pattern_sql())}",
    # A key's family for `delimiters`: the loader's keys.family for the default `:` (key_pattern
    # worked out at load time, never null), key_pattern afresh for other delimiters.  No
    # coalesce(family, ...): it would cost a GROUP BY the family 2.5 times as much (it reads
    # the family's dictionary vectors value by value).
    "CREATE OR REPLACE MACRO key_family(key, family, delimiters := ':') AS "
    "CASE WHEN delimiters = ':' THEN family "
    "ELSE key_pattern(key, delimiters := delimiters) END",
    # First `depth` segments of a key, delimiters kept between them; the whole key if it has fewer.
    # key_prefix('user:1000:profile', 2) = 'user:1000'.  (A constant regex: `segment+delimiter`
    # pieces, so the pattern compiles once whatever the depth.)
    "CREATE OR REPLACE MACRO key_prefix(key, depth, delimiters := ':') AS "
    "CASE WHEN depth <= 0 THEN '' "
    "WHEN len(regexp_extract_all(key, '[^' || delim_class(delimiters) || ']*[' || delim_class(delimiters) || ']')) "
    ">= depth THEN left(array_to_string(regexp_extract_all(key, '[^' || delim_class(delimiters) || ']*[' "
    "|| delim_class(delimiters) || ']')[1:depth], ''), -1) ELSE key END",
    # Number of segments (1 + number of delimiter characters).
    "CREATE OR REPLACE MACRO key_depth(key, delimiters := ':') AS "
    "length(key) - length(regexp_replace(key, '[' || delim_class(delimiters) || ']', '', 'g')) + 1",
    # Cluster hashtag: the part hashed for the slot (text between the first `{` and the first `}`
    # after it), NULL when the key has no usable tag (no braces, or `{}` first).  docs/rdb-format.md section 9.
    # (The regex only for keys holding a `{`: most have none, and contains() is much cheaper.)
    "CREATE OR REPLACE MACRO key_hashtag(key) AS "
    "CASE WHEN contains(key, '{') THEN nullif(regexp_extract(key, '^[^{]*\\{([^}]+)\\}', 1), '') END",
    # jemalloc usable size for an allocation of n bytes (8-byte quantum, 4 classes per doubling).
    "CREATE OR REPLACE MACRO jemalloc_size(n) AS "
    "CASE WHEN n IS NULL THEN NULL WHEN n <= 8 THEN 8::BIGINT "
    "WHEN n <= 64 THEN ((n + 7) // 8 * 8)::BIGINT "
    "ELSE (((n - 1) // (1::BIGINT << (floor(log2(n - 1))::BIGINT - 2)) + 1) "
    "* (1::BIGINT << (floor(log2(n - 1))::BIGINT - 2)))::BIGINT END",
    # Allocation of an sds string of n bytes (header 1/3/5/9 bytes + NUL), rounded by jemalloc.
    "CREATE OR REPLACE MACRO sds_alloc(n) AS "
    "jemalloc_size(n + 1 + CASE WHEN n < 32 THEN 1 WHEN n < 256 THEN 3 "
    "WHEN n < 65536 THEN 5 ELSE 9 END)",
    # Human label of a TTL in ms relative to the snapshot (NULL = no TTL).
    "CREATE OR REPLACE MACRO ttl_bucket(ttl_ms) AS CASE "
    "WHEN ttl_ms IS NULL THEN 'no ttl' WHEN ttl_ms <= 0 THEN 'expired' "
    "WHEN ttl_ms < 60000 THEN '< 1 min' WHEN ttl_ms < 3600000 THEN '1 min - 1 h' "
    "WHEN ttl_ms < 86400000 THEN '1 h - 1 d' WHEN ttl_ms < 604800000 THEN '1 d - 7 d' "
    "WHEN ttl_ms < 2592000000 THEN '7 d - 30 d' WHEN ttl_ms < 31536000000 THEN '30 d - 1 y' "
    "ELSE '>= 1 y' END",
    # Sort position of ttl_bucket labels.
    "CREATE OR REPLACE MACRO ttl_bucket_order(label) AS list_position(['expired', '< 1 min', "
    "'1 min - 1 h', '1 h - 1 d', '1 d - 7 d', '7 d - 30 d', '30 d - 1 y', '>= 1 y', 'no ttl'], label)",
    # Does a family name look like data that should expire (caches, sessions, tokens, locks)?
    "CREATE OR REPLACE MACRO looks_ephemeral(name) AS regexp_matches(lower(name), "
    "'(^|[^a-z])(cache|cached|session|sessions|sess|token|tokens|tmp|temp|otp|nonce|lock|locks|"
    "ratelimit|rate|throttle|captcha|verify|verification)([^a-z]|$)')",
    # Listpack bytes a collection would take if compact (docs/rdb-format.md section 5.2): ~2 bytes of entry overhead
    # (encoding byte + backlen) per element, hash = field + value, zset = member + score, + 7 header.
    # Estimated from the RDB-serialized size (1 length byte per element, close to the listpack
    # header byte), capped by the bound from the longest element.  An approximation: LZF-compressed
    # elements make it low, scores and integers make both bounds rough.
    "CREATE OR REPLACE MACRO listpack_bytes_estimate(type, length, max_elem_bytes, serialized_bytes) AS "
    "least(7 + length * CASE type WHEN 'hash' THEN 2 * (coalesce(max_elem_bytes, 64) + 2) "
    "WHEN 'zset' THEN coalesce(max_elem_bytes, 64) + 2 + 10 ELSE coalesce(max_elem_bytes, 64) + 2 END, "
    "coalesce(7 + serialized_bytes + length * CASE WHEN type IN ('hash', 'zset') THEN 2 ELSE 1 END, "
    "9223372036854775807))::BIGINT",
    # MEMORY USAGE of a key whose value is one listpack of lp_bytes (7.x model, docs/rdb-format.md section 8.4):
    # key sds + dictEntry (24) + robj (16) + the listpack allocation.
    "CREATE OR REPLACE MACRO compact_memory_estimate(key_length, lp_bytes) AS "
    "sds_alloc(key_length) + 24 + 16 + jemalloc_size(lp_bytes)",
]


def create_macros(con, temporary: bool = False) -> None:
    """(Re)create the macros on a DuckDB connection; TEMP ones for a read-only database."""
    for sql in MACROS:
        if temporary:
            sql = sql.replace("CREATE OR REPLACE MACRO", "CREATE OR REPLACE TEMP MACRO", 1)
        con.execute(sql)
