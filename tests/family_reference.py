"""The reference of two columns the compiled loader derives from a key name, `family` and
`plain_key`: tests hold the compiled twins (rdbscan/db/_batch.pyx) and the SQL macros
(key_pattern, is_plain_key) to these.

A key's family as the loader computes it: `key_pattern(key)` with the default delimiter `:`,
for keys of printable ASCII up to FAMILY_MAX_KEY bytes, in Python.

The `keys.family` column holds key_pattern(key) for every key.  Working it out per key in SQL
costs DuckDB about as much as storing the row (its regex passes: 2.5 us a key), so the loader
does it while the key is at hand.  Segments end at `:` and at `#` (macros.SPLIT_MARK, as in
split-key families `uid#0#7`).  A segment without a digit, `-` or `@` is no placeholder; any other
is, but for one `{` before it and one `}` after it (hashtag braces: no placeholder holds a
brace), a date (`{date}`), an IPv4 address (`{ip}`: `10.1.2.3`), an e-mail address (`{email}`), an id (`{id}`: a number, a
UUID, 8+ hex characters with a digit, 16+ token characters with a digit and a letter), or left
as it is (`10.1.2`, `user-1`): what
key_pattern's passes do to a whole segment.  Any other key (bytes outside printable ASCII, very
long keys) gets None here, and the INSERT computes key_pattern(key) for it in DuckDB.  So a
None is never wrong, only slower; tests compare both twins with the macro.

`_batch.KeyColumns` has the compiled twin, which fills the column for the compiled batch;
this function is its reference (tests/test_family.py).  The pure-Python path leaves every family
to the INSERT: a Python regex per key costs more than DuckDB's macro.
"""

from __future__ import annotations

import re

from rdbscan.db.macros import _DATE, _HEX, _NUMBER, _TOKEN, _UUID, EMAIL, IPV4

# Longer keys are left to DuckDB: their family could outgrow the batch's string buffer.
FAMILY_MAX_KEY = 4096

_PRINTABLE = re.compile(rb"[\x20-\x7e]*")
_DIGIT_OR_DASH = re.compile(rb"[0-9@-]")  # and '@': what can make a segment a placeholder
_BOUNDARY = re.compile(rb"([:#])")  # the default delimiter and macros.SPLIT_MARK
_DATE_SEG = re.compile(f"(?:{_DATE})".encode())
_IPV4_SEG = re.compile(IPV4.encode())
_EMAIL_SEG = re.compile(EMAIL.encode())
_UUID_OR_NUMBER = re.compile(f"{_UUID}|{_NUMBER}".encode())
_HEX_8 = re.compile(f"{_HEX}{{8,}}".encode())
_TOKEN_16 = re.compile(f"{_TOKEN}{{16,}}".encode())


def _placeholder(body: bytes) -> bytes:
    """What key_pattern's passes make of a whole segment (without its braces): a date, an IPv4
    address, an id (a UUID, a number, 8+ hex characters with a digit, 16+ token characters with a
    digit and a letter) or the segment as it is."""
    if _DATE_SEG.fullmatch(body):
        return b"{date}"
    if _IPV4_SEG.fullmatch(body):
        return b"{ip}"
    if _EMAIL_SEG.fullmatch(body):
        return b"{email}"
    digit = re.search(rb"[0-9]", body) is not None
    letter = re.search(rb"[A-Za-z]", body) is not None
    if (
        _UUID_OR_NUMBER.fullmatch(body)
        or (digit and _HEX_8.fullmatch(body))
        or (digit and letter and _TOKEN_16.fullmatch(body))
    ):
        return b"{id}"
    return body


def fast_family(key: bytes) -> str | None:
    """key_pattern(key) for a key of printable ASCII; None for other keys."""
    if len(key) > FAMILY_MAX_KEY or not _PRINTABLE.fullmatch(key):
        return None
    out = []
    for i, seg in enumerate(_BOUNDARY.split(key)):
        if i % 2 or not _DIGIT_OR_DASH.search(seg):  # a boundary, or a plain segment
            out.append(seg)
            continue
        lead = b"{" if seg.startswith(b"{") else b""
        body = seg[len(lead) :]
        trail = b"}" if body.endswith(b"}") else b""
        body = body[: len(body) - len(trail)]
        out.append(lead + _placeholder(body) + trail)
    return b"".join(out).decode("ascii")


# The is_plain_key macro's pattern for the delimiter `:`.
PLAIN_KEY_REGEX = "[a-z][a-z0-9_]*(?::[a-z0-9_]*)+"
_PLAIN = re.compile(PLAIN_KEY_REGEX.encode())


def plain_key(key: bytes) -> bool:
    """keys.plain_key: the key is lowercase words (a-z, 0-9, `_`) joined by `:`, starting
    with a letter, with at least one `:` (`user:1000:profile`, `cache:page_2`).  The naming
    rules break none of their character rules on such a key and take a fast path on this
    column (rdbscan/reports/queries/_rnaming.sql).  The compiled batch sets it while it copies the key
    (`_batch._plain`); the Python path leaves it to the INSERT, which runs PLAIN_KEY_REGEX."""
    return _PLAIN.fullmatch(key) is not None
