"""The reference of two columns the compiled loader derives from a key name, `family` and
`plain_key`: tests hold the compiled twins (rdbscan/db/_batch.pyx) and the SQL macros
(key_pattern, is_plain_key) to these.

A key's family as the loader computes it: `key_pattern(key)` with the default delimiter `:`,
for the keys that take key_pattern's first fast path (macros._FAST_SEG), in Python.

The `keys.family` column holds key_pattern(key) for every key.  Working it out per key in SQL
costs DuckDB about as much as storing the row, so the loader does it while the key is at hand:
a key of plain segments (no digit, no `-`; segments end at `:` and at `#`, macros.SPLIT_MARK,
as in split-key families `uid#0#7`) and integer ids (`42`, `{42}`; not 8 digits that
read as a compact date) becomes the key with each digit run replaced by `{id}`, which is what
key_pattern gives it.  Any other key (dates, UUIDs, hex, tokens, bytes outside printable ASCII,
very long keys) gets None here, and the INSERT computes key_pattern(key) for it in DuckDB.  So
a None is never wrong, only slower; tests compare both twins with the macro.

`_batch.KeyColumns` has the compiled twin, which fills the column for the compiled batch;
this function is its reference (tests/test_family.py).  The pure-Python path leaves every family
to the INSERT: a Python regex per key costs more than DuckDB's macro.
"""

from __future__ import annotations

import re

from rdbscan.db.macros import _DATE8

# Longer keys are left to DuckDB: their family could outgrow the batch's string buffer.
FAMILY_MAX_KEY = 4096

_PRINTABLE = re.compile(rb"[\x20-\x7e]*")
_DIGIT_OR_DASH = re.compile(rb"[0-9-]")
_BOUNDARY = re.compile(rb"([:#])")  # the default delimiter and macros.SPLIT_MARK
_ID_SEGMENT = re.compile(rb"(\{?)([0-9]+)(\}?)")
_COMPACT_DATE = re.compile(_DATE8.encode())


def fast_family(key: bytes) -> str | None:
    """key_pattern(key) for a key of plain segments and integer ids; None for other keys."""
    if len(key) > FAMILY_MAX_KEY or not _PRINTABLE.fullmatch(key):
        return None
    out = []
    for i, seg in enumerate(_BOUNDARY.split(key)):
        if i % 2 or not _DIGIT_OR_DASH.search(seg):  # a boundary, or a plain segment
            out.append(seg)
            continue
        m = _ID_SEGMENT.fullmatch(seg)
        if m is None or (len(m[2]) == 8 and _COMPACT_DATE.fullmatch(m[2])):
            return None
        out.append(m[1] + b"{id}" + m[3])
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
