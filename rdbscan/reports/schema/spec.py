"""What a key schema file is (docs/schema.md): its format version, its first line, what a family
may declare, and the pattern language: `{id}`, `{date}`, ... placeholders between literal text,
as regular expressions."""

from __future__ import annotations

import re

from ...db.macros import EMAIL, IPV4, segment_delimiters

SCHEMA_FORMAT = 1
# First line of every TOML / markdown schema rdbscan writes: `schema -o` may replace such a file.
HEADER = "# rdbscan key schema"
# What a family may declare (the rules `report --schema` checks)
RULE_KEYS = (
    "type",
    "ttl",
    "max_ttl",
    "max_length",
    "max_value_bytes",
    "max_memory",
    "max_family_memory",
)

TTL_VALUES = ("required", "none", "optional")

# --- the pattern language (docs/schema.md, "Patterns") --------------------------------------------

# Each placeholder stands for one whole value; any other text, braces included, is literal
# (`{user:{id}}:cart` is the hashtag `{user:` + an integer + `}:cart`).
PLACEHOLDERS = {
    "id": "[0-9]+",
    "ts": "[0-9]{10}|[0-9]{13}",
    "date": r"(?:19|20)[0-9]{2}-?(?:0[1-9]|1[0-2])(?:-?(?:0[1-9]|[12][0-9]|3[01]))?(?:[T ][0-9]{2})?",
    "uuid": "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "hex": "[0-9a-fA-F]+",
    # an IPv4 and an e-mail address (db/macros.IPV4 and EMAIL: the family rule's {ip}, {email})
    "ip": IPV4,
    "email": EMAIL,
    "*": None,  # one or more characters other than a delimiter
}
PLACEHOLDER_RE = re.compile(r"\{(id|ts|date|uuid|hex|ip|email|\*)\}")


def _escape(text: str) -> str:
    """A literal for both Python's re and RE2: ASCII other than letters and digits as \\xhh."""
    return "".join(c if c.isalnum() or ord(c) > 127 else f"\\x{ord(c):02x}" for c in text)


def pattern_regex(pattern: str, delimiters: str = ":") -> str:
    """The regular expression (RE2 and Python) a whole key must match to belong to `pattern`."""
    out, pos = [], 0
    for m in PLACEHOLDER_RE.finditer(pattern):
        out.append(_escape(pattern[pos : m.start()]))
        rx = PLACEHOLDERS[m.group(1)]
        if rx is None:
            rx = "[^" + "".join(f"\\x{ord(c):02x}" for c in segment_delimiters(delimiters)) + "]+"
        out.append(f"(?:{rx})")
        pos = m.end()
    out.append(_escape(pattern[pos:]))
    return "".join(out)


def literal_prefix(pattern: str) -> str:
    m = PLACEHOLDER_RE.search(pattern)
    return pattern[: m.start()] if m else pattern


def literal_suffix(pattern: str) -> str:
    ends = [m.end() for m in PLACEHOLDER_RE.finditer(pattern)]
    return pattern[ends[-1] :] if ends else pattern


def literal_length(pattern: str) -> int:
    return len(PLACEHOLDER_RE.sub("", pattern))
