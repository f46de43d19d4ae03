"""How the reports write a value: sizes, counts, shares, durations, times, and text that came
from a dump (escaped: renderers never interpret markup in it); `plain`, the one conversion of a
value from DuckDB to what JSON holds."""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import re
import textwrap


def plain(value):
    """A value from DuckDB as JSON has it: timestamps as ISO 8601, decimals as numbers, NaN and
    infinities as null, integral floats as integers, bytes as text; the one conversion of report
    dicts and of `rdbscan sql/query --format json` rows."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        # six decimals, but six significant digits for tiny values (p-values, thresholds)
        return round(value, 6) if abs(value) >= 1e-3 else float(f"{value:.6g}")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "backslashreplace")
    return value


_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def fmt_bytes(n) -> str:
    if n is None:
        return "-"
    n = float(n)
    for unit in _UNITS:
        if abs(n) < 1024 or unit == _UNITS[-1]:
            return f"{int(n)} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


def fmt_int(n) -> str:
    return "-" if n is None else f"{int(n):,}"


def fmt_keys(n) -> str:
    """`1 key`, `1,024 keys`: a count of keys as a noun phrase."""
    return f"{fmt_int(n)} key" if n == 1 else f"{fmt_int(n)} keys"


def fmt_pct(x) -> str:
    if x is None:
        return "-"
    x = float(x) * 100
    return f"{x:.1f}%" if x >= 0.1 or x == 0 else "<0.1%"


def fmt_duration_ms(ms) -> str:
    if ms is None:
        return "-"
    s = ms / 1000
    sign = "-" if s < 0 else ""
    s = abs(s)
    for unit, size in (("y", 365 * 86400), ("d", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            return f"{sign}{s / size:.1f} {unit}"
    return f"{sign}{s:.0f} s"


def fmt_seconds(s) -> str:
    return "-" if s is None else fmt_duration_ms(s * 1000)


def fmt_time(value) -> str:
    """ISO timestamp or epoch ms -> 'YYYY-MM-DD HH:MM:SS UTC'."""
    if value is None:
        return "-"
    if isinstance(value, (int, float)):
        value = _dt.datetime.fromtimestamp(value / 1000, _dt.timezone.utc)
    elif isinstance(value, str):
        try:
            value = _dt.datetime.fromisoformat(value)
        except ValueError:
            return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return value.astimezone(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


# What a terminal could act on: C0 and C1 control characters (ESC, CSI, BEL, newline, ...),
# DEL, and the invisible Unicode format characters that reorder or hide text (bidi overrides,
# zero-width spaces, line and paragraph separators, byte-order mark).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def _escaped(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c <= 0xFF else f"\\u{c:04x}"


def escape_text(text) -> str:
    """A string that came from a dump (key, family, aux field, member name, ...) as every renderer
    shows it: unsafe characters as \\xNN (\\uNNNN above U+00FF); the rest as it is.  Renderers
    never interpret markup in it (Rich Text objects, Markdown escapes)."""
    return _UNSAFE.sub(_escaped, str(text))


def fmt_key(key, width: int = 60) -> str:
    """Key names may hold control bytes and be 1 KB long: escape and shorten for display."""
    if key is None:
        return "-"
    text = escape_text(key)
    if len(text) > width:  # cut between characters, never inside an escape
        kept, n = [], 0
        for piece in map(escape_text, str(key)):
            n += len(piece)
            if n > width - 1:
                break
            kept.append(piece)
        text = "".join(kept) + "…"
    return text


def fmt_list(items, width: int = 60) -> str:
    return ", ".join(fmt_key(i, width) for i in (items or [])) or "-"


def fmt_db_key(row) -> str:
    return (
        fmt_key(row["key"]) if row.get("db", 0) == 0 else f"{fmt_key(row['key'])} (db {row['db']})"
    )


def wrapped(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    """Plain text wrapped at `width` columns, its first line after `first`, the others after
    `rest`; a word (a key name, `lazyfree-lazy-expire`) is never cut, so a line holding a longer
    one is wider."""
    return textwrap.wrap(
        text,
        width,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first.rstrip()]
