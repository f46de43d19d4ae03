"""`--redact`: key names out of what rdbscan writes, before any renderer sees it (docs/redact.md).

A key name becomes its family pattern (the key_pattern macro of rdbscan/db/macros.py: the
segments that vary, ids, dates, UUIDs, hashes, tokens, IPv4 and e-mail addresses, replaced by
{id} / {date} / {ip} / {email}) and a short
keyed hash of the whole name, `user:{id}:profile@3fa9c21b07`: the same key gives the same hash in
every run with the same secret, so two redacted reports still diff, and a reader without the
secret cannot test a guess.  The hash is BLAKE2b in its keyed mode (a MAC: RFC 7693 section 2.5).
At the `strict` level the family names are hashed too (`family-5d0e77a1c4`).

One walk over the data (the report dict, the diff, the trend, the schema) rewrites it, so every
format (text, markdown, JSON, HTML, OpenMetrics, TOML) shows the same redacted names; `export`
redacts its rows on their way to DuckDB's writer (`redact_batches`).  What is rewritten is named by
field (KEY_FIELDS, PATTERN_FIELDS, HIDDEN_FIELDS); prose (findings, advice, notes) has every key
name (and, when strict, every family name) found in the data replaced inside it.

    r = Redactor.from_options("keys")    # secret: RDBSCAN_REDACT_SECRET, else a random one
    report = redact_data(report, r)
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from ..errors import EXIT_INPUT, EXIT_USAGE, CommandError

ENV_SECRET = "RDBSCAN_REDACT_SECRET"
LEVELS = ("keys", "strict")
HASH_BYTES = 5  # 10 hex characters: 40 bits, no collision to expect among a family's keys
SEPARATOR = "@"  # between a key's family and its hash (markdown leaves it alone; not a delimiter)

# Fields whose string (or list of strings) is a key name, or a part of one that may vary
# (a hashtag is the part of a key a cluster hashes; an example parent is a key's first segments);
# also any field named `..._key(s)` or `..._example(s)` (hottest_key, largest_key, ...).
KEY_SUFFIXES = ("_key", "_keys", "_example", "_examples")
KEY_FIELDS = frozenset(
    {
        "key",
        "keys_sample",
        "example",
        "examples",
        "example_parent",
        "largest_key",
        "largest_shard",
        "logical_key",
        "hashtag",
        "sample_keys",
    }
)
# Fields whose string is a family pattern, or a prefix of one (no varying segment: shown as it
# is, hashed at the strict level).
PATTERN_FIELDS = frozenset({"pattern", "family", "prefix", "parent"})
# User data that is not a key name (stream consumer group names): never shown.
HIDDEN_FIELDS = frozenset({"group_details", "groups", "consumers", "members"})
HIDDEN = "(redacted)"
# Words that name what rdbscan measured (types, encodings, rules, sections, ...): a key that
# happens to be called `hash` or `warning` does not rewrite them.
_VOCABULARY_FIELDS = frozenset(
    {
        "type",
        "types",
        "old_type",
        "new_type",
        "encoding",
        "encodings",
        "old_encoding",
        "new_encoding",
        "target_encoding",
        "compact_encoding",
        "list_compact_encoding",
        "severity",
        "old_severity",
        "new_severity",
        "rule",
        "rules",
        "id",
        "section",
        "sections",
        "measure",
        "ranking",
        "change",
        "status",
        "kind",
        "direction",
        "threshold",
        "scope",
        "bucket",
        "granularity",
        "ttl",
        "ttl_policy",
        "server",
        "server_version",
        "magic",
        "checksum",
        "framing",
        "input",
        "snapshot_source",
        "delimiters",
        "generated_at",
        "generated_by",
        "snapshot_time",
        "moment",
        "name",
        "label",
        "path",
        "paths",
        "database",
        "instance",
    }
)
# In prose, a short number is a figure (`100 keys`), not the key named `100`: names of fewer
# than 5 digits are rewritten in their own fields only.
_FIGURE = re.compile(r"[-+]?[0-9]{1,4}")


def _hash(secret: bytes, text: str, what: bytes) -> str:
    data = text.encode("utf-8", "surrogateescape")
    return hashlib.blake2b(data, key=secret, digest_size=HASH_BYTES, person=what).hexdigest()


@dataclass
class Redactor:
    """How names are redacted: the level (`keys`, `strict`), the secret (at most 64 bytes: a
    longer one is hashed down) and where it came from (`env`, `file`, `random`)."""

    level: str = "keys"
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    source: str = "random"
    _families: dict[str, str] = field(default_factory=dict, repr=False)  # family -> as shown

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"redaction level {self.level!r}: one of {', '.join(LEVELS)}")
        if len(self.secret) > 64:
            self.secret = hashlib.blake2b(self.secret).digest()

    @classmethod
    def from_options(cls, level: str, secret_file: str | None = None) -> Redactor:
        """The secret of `secret_file` (its bytes, surrounding whitespace stripped), else of
        the environment variable RDBSCAN_REDACT_SECRET, else a random one for this run.  A
        file that cannot be read is a CommandError (EXIT_INPUT), an empty one EXIT_USAGE."""
        if secret_file is not None:
            try:
                with open(secret_file, "rb") as f:
                    secret = f.read().strip()
            except OSError as e:
                raise CommandError(
                    f"{secret_file}: cannot be read ({e.strerror or e}); expected a file holding "
                    "the redaction secret",
                    EXIT_INPUT,
                ) from None
            if not secret:
                raise CommandError(
                    f"{secret_file}: empty; expected a file holding the redaction secret",
                    EXIT_USAGE,
                )
            return cls(level, secret, "file")
        env = os.environ.get(ENV_SECRET, "").strip()
        if env:
            return cls(level, env.encode("utf-8", "surrogateescape"), "env")
        return cls(level)

    @property
    def strict(self) -> bool:
        return self.level == "strict"

    def family(self, pattern: str) -> str:
        """A family name as shown: itself, or (strict) `family-` and its keyed hash."""
        if not self.strict or pattern in ("", "(other)"):
            return pattern
        shown = self._families.get(pattern)
        if shown is None:  # few families, many keys: export asks for each key's
            shown = self._families[pattern] = "family-" + _hash(
                self.secret, pattern, b"rdbscan-family"
            )
        return shown

    def key(self, name: str, pattern: str) -> str:
        """A key name as shown: its family (as `family` shows it), `@`, its keyed hash."""
        return f"{self.family(pattern)}{SEPARATOR}{_hash(self.secret, name, b'rdbscan-key')}"

    def describe(self) -> dict:
        """The `redaction` object of the outputs (docs/redact.md); the renderers of the diff,
        the trend and the schema show its `note`."""
        return {"level": self.level, "secret": self.source, "note": self.note()}

    def note(self) -> str:
        """One sentence saying how the names were redacted, for the reports' notes."""
        what = "family names hashed too" if self.strict else "family patterns kept"
        if self.source == "random":
            secret = (
                "a random secret of this run: its hashes match no other run's "
                f"(set {ENV_SECRET} or --redact-secret FILE)"
            )
        else:
            secret = f"the secret of {ENV_SECRET if self.source == 'env' else 'the --redact-secret file'}"
        return (
            f"Key names are redacted ({what}): each shows its family and a keyed hash, with "
            f"{secret}."
        )


# --- the walk --------------------------------------------------------------------------------


def _is_key_field(name: str) -> bool:
    return name in KEY_FIELDS or name.endswith(KEY_SUFFIXES)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _collect(obj: Any, keys: set[str], patterns: set[str], named: set[str]) -> None:
    """The key names of `obj` into `keys`, its family names into `patterns`, the keys its
    error lines name into `named`."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if _is_key_field(k):
                keys.update(_strings(v))
            elif k in PATTERN_FIELDS:
                patterns.update(_strings(v))
            _collect(v, keys, patterns, named)
    elif isinstance(obj, list):
        for v in obj:
            _collect(v, keys, patterns, named)
    elif isinstance(obj, str) and ("key '" in obj or 'key "' in obj):
        named.update(name for _, _, name in _error_keys(obj))


def key_patterns(names: set[str], delimiters: str) -> dict[str, str]:
    """Each key name's family (the key_pattern macro, worked out by DuckDB in memory)."""
    if not names:
        return {}
    import duckdb

    from ..db.macros import create_macros

    con = duckdb.connect(":memory:")
    try:
        create_macros(con)
        listed = sorted(names)
        rows = con.execute(
            "SELECT k, key_pattern(k, delimiters := $d) FROM unnest($names) AS t(k)",
            {"names": listed, "d": delimiters},
        ).fetchall()
    finally:
        con.close()
    return {k: p for k, p in rows}


# A name inside prose ends at a space, a bracket, a comma, or a colon or full stop that ends a
# clause; not where a longer name goes on (`user:1` is not replaced inside `user:10`).
_BEFORE = r"(?<![A-Za-z0-9_{}\-:.])"
_AFTER = r"(?![A-Za-z0-9_{}\-]|[:.][^\s])"


def _scrubber(replace: dict[str, str]):
    """A function rewriting every name of `replace` found in a text (not inside a longer
    name), the longest names first."""
    names = sorted((n for n in replace if n and not _FIGURE.fullmatch(n)), key=len, reverse=True)
    if not names:
        return lambda text: text
    rx = re.compile(f"{_BEFORE}(?:" + "|".join(re.escape(n) for n in names) + f"){_AFTER}")
    return lambda text: rx.sub(lambda m: replace[m.group(0)], text)


# A filter's description (db/filters.KeyFilter.describe, reported_filters, filter_note): the
# globs and regexes a user gave may name keys; what follows them is rdbscan's own words.
_FILTER_NAMES = re.compile(
    r"\b(match|regex) .*?(?=, (?:regex |type |db |memory >= |length >= |not expired)|; "
    r"|\): the (?:figures|diff)| \(\d+ dump|$)"
)


# The key an error line names (rdbscan/rdb/errors.py, RDBError.describe): `key ` and the repr of
# its name, cut at REPR_CUT characters (and then without its closing quote).
_KEY_START = re.compile(r"\bkey (['\"])")
REPR_CUT = 120


def _unrepr(body: str, quote: str) -> str:
    """The name a repr's body (without its quotes) stands for; a body cut inside an escape
    loses that escape."""
    for drop in range(4):
        try:
            name = ast.literal_eval(quote + body[: len(body) - drop] + quote)
        except (ValueError, SyntaxError):
            continue
        if isinstance(name, str):
            return name
    return body


def _error_keys(text: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of each key name an error line holds, text[start:end] its repr."""
    found = []
    pos = 0
    while (m := _KEY_START.search(text, pos)) is not None:
        quote, start = m.group(1), m.start(1)
        limit = min(len(text), start + REPR_CUT)
        j = m.end()
        while j < limit and text[j] != quote:
            j += 2 if text[j] == "\\" else 1
        j = min(j, limit)
        closed = j < limit and text[j] == quote
        found.append((start, j + 1 if closed else j, _unrepr(text[start + 1 : j], quote)))
        pos = j + 1 if closed else j
    return found


def redact_error_keys(
    text: str, redactor: Redactor, delimiters: str = ":", families: dict[str, str] | None = None
) -> str:
    """`text` with each key an error line names (`key 'user:1234:cart'`) shown as the report
    shows a key, FAMILY@HASH.  A name so long that its repr was cut is hashed as it is shown
    (its hash is not the whole name's).  families: key_patterns of the names, when known."""
    found = _error_keys(text)
    if not found:
        return text
    if families is None or any(name not in families for _, _, name in found):
        families = key_patterns({name for _, _, name in found}, delimiters)
    out, pos = [], 0
    for start, end, name in found:
        out += [text[pos:start], redactor.key(name, families.get(name) or "")]
        pos = end
    return "".join(out) + text[pos:]


def redact_line(line: str, redactor: Redactor, delimiters: str = ":") -> str:
    """A line for standard error (a load's error or warning, `--skip-bad`'s and keys.invalid's
    first key, a filter said) as `--redact` wants it: each key it names as FAMILY@HASH, the
    globs and regexes of a filter hidden; file names and byte offsets stay."""
    if "with a filter (" in line:
        line = hide_filter(line)
    return redact_error_keys(line, redactor, delimiters)


def hide_filter(text: str) -> str:
    """`text` with the globs and regexes of any filter description in it replaced."""
    return _FILTER_NAMES.sub(lambda m: f"{m.group(1)} {HIDDEN}", text)


def redact_data(data: Any, redactor: Redactor, delimiters: str = ":") -> Any:
    """A copy of `data` (a report, diff, trend or schema dict) with its key names and family
    names redacted as `redactor` says, and `redaction` (Redactor.describe) added at its top."""
    keys: set[str] = set()
    patterns: set[str] = set()
    named: set[str] = set()
    _collect(data, keys, patterns, named)
    families = key_patterns(keys | named, delimiters)  # one DuckDB query for them all
    key_map = {k: redactor.key(k, families.get(k) or "") for k in keys}
    pattern_map = {p: redactor.family(p) for p in patterns}
    prose = dict(key_map)
    if redactor.strict:
        for p, shown in pattern_map.items():
            prose.setdefault(p, shown)
    scrub = _scrubber(prose)

    def names(value: Any, mapping: dict[str, str]) -> Any:
        if isinstance(value, str):
            return mapping.get(value, value)
        if isinstance(value, list):
            return [mapping.get(v, v) if isinstance(v, str) else walk(v, None) for v in value]
        return walk(value, None)

    def text(value: str, name: str | None) -> str:
        if name in _VOCABULARY_FIELDS:
            return value
        if value in key_map:
            return key_map[value]
        if redactor.strict and value in pattern_map:
            return pattern_map[value]
        if name == "filter" or "filter (" in value:
            value = hide_filter(value)
        if "key '" in value or 'key "' in value:
            value = redact_error_keys(value, redactor, delimiters, families)
        return scrub(value)

    def walk(obj: Any, name: str | None) -> Any:
        if isinstance(obj, dict):
            out = {}
            for k, v in obj.items():
                if _is_key_field(k):
                    out[k] = names(v, key_map)
                elif k in PATTERN_FIELDS:
                    out[k] = names(v, pattern_map)
                elif k in HIDDEN_FIELDS and isinstance(v, (str, list)):
                    out[k] = HIDDEN if isinstance(v, str) else [HIDDEN for _ in v]
                else:
                    out[k] = walk(v, k)
            return out
        if isinstance(obj, list):
            return [walk(v, name) for v in obj]
        if isinstance(obj, str):
            return text(obj, name)
        return obj

    out = walk(data, None)
    if isinstance(out, dict):
        out["redaction"] = redactor.describe()
    return out


def redact_report(report: dict, redactor: Redactor) -> dict:
    """The report dict (rdbscan.reports.report.build_report) redacted, with the redaction said
    in the overview's notes (so the text, markdown and HTML reports say it too)."""
    delimiters = (report.get("options") or {}).get("delimiters") or ":"
    out = redact_data(report, redactor, delimiters)
    overview = out.get("overview")
    if isinstance(overview, dict):
        overview["notes"] = list(overview.get("notes") or []) + [redactor.note()]
    return out


def redact_batches(reader, redactor: Redactor, family_column: str):
    """An Arrow RecordBatchReader of `reader`'s rows with `key` redacted (from the family in
    `family_column`, which is left out), and `family` too at the strict level (`export`)."""
    import pyarrow as pa

    names = [n for n in reader.schema.names if n != family_column]
    schema = pa.schema([reader.schema.field(n) for n in names])

    def batches():
        for batch in reader:
            fams = batch.column(family_column).to_pylist()
            cols = []
            for n in names:
                col = batch.column(n)
                if n == "key":
                    col = pa.array(
                        [
                            None if k is None else redactor.key(k, f or "")
                            for k, f in zip(col.to_pylist(), fams)
                        ],
                        col.type,
                    )
                elif n == "family" and redactor.strict:
                    col = pa.array(
                        [None if f is None else redactor.family(f) for f in col.to_pylist()],
                        col.type,
                    )
                cols.append(col)
            yield pa.RecordBatch.from_arrays(cols, schema=schema)

    return pa.RecordBatchReader.from_batches(schema, batches())
