"""Sizes as users write them ("512MB", "2GiB", "4KB", a bare number of bytes): the one parser of
`--memory-limit`, `diff --fail-on` thresholds and the sizes of schema rules."""

from __future__ import annotations

import re

_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(b|[kmgt]i?b)?\s*", re.I)
_POWER = {"b": 0, "k": 1, "m": 2, "g": 3, "t": 4}


def parse_size(text: str, kb: int = 1000) -> int:
    """The bytes `text` says.  KB, MB, GB and TB are powers of `kb` (1000, as DuckDB reads a
    memory limit; schema files give 1024, docs/schema.md), KiB, MiB, GiB and TiB powers of 1024.
    ValueError when `text` is no size."""
    m = _SIZE.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not a size (examples: 512MB, 2GB, 1GiB)")
    unit = (m.group(2) or "b").lower()
    base = 1024 if "i" in unit else kb
    return int(float(m.group(1)) * base ** _POWER[unit[0]])
