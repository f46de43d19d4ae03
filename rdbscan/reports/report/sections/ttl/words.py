"""What an expiry herd's figures say in words: the builder's advice and the findings share it
(its own module: build.py imports it, and the findings read build.py's types)."""

from __future__ import annotations


def expected_words(expected) -> str:
    """What an even spread of the family's expiries would put in that moment, in words."""
    if expected is None:
        return ""
    if expected < 0.01:
        return "where evenly spread TTLs would put almost none"
    if expected < 1:
        return "where evenly spread TTLs would put less than one"
    return f"where evenly spread TTLs would put about {expected:,.0f}"
