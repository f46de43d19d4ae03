"""A key schema written as TOML (the file `report --schema` checks), markdown (the table for
documentation) or JSON, and to a file only if rdbscan wrote the one it replaces."""

from __future__ import annotations

import json
import os
import re
import tempfile
from typing import TYPE_CHECKING

from ...errors import CommandError, not_overwritten
from ..format import wrapped
from .spec import HEADER, RULE_KEYS, SCHEMA_FORMAT

if TYPE_CHECKING:
    from .data import SchemaData, SchemaFamily


def _toml_str(s: str) -> str:
    """A TOML basic string (json.dumps escapes all but DEL, which TOML also forbids raw)."""
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v if x is not None) + "]"
    if isinstance(v, dict):
        return (
            "{"
            + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items() if x is not None)
            + "}"
        )
    raise TypeError(f"no TOML form for {v!r}")


def _toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_str(k)


def render_toml(schema: SchemaData) -> str:
    lines = [
        # at most 80 columns, as the file is read in a terminal or an editor
        HEADER + ": one [[family]] per key family; the format and the pattern",
        "# language are in docs/schema.md. Write the descriptions, tighten the rules",
        "# (ttl, max_ttl, max_length, max_value_bytes, max_memory, max_family_memory),",
        "# commit the file, and check dumps with",
        "#   rdbscan report DUMP --schema THIS_FILE --fail-on schema",
        "# [family.observed] is what the dump showed when the file was written; checks",
        "# ignore it.",
        *(  # --redact (docs/redact.md); a comment: [schema] holds only what the checks read
            wrapped(" ".join(schema["redaction"]["note"].split()), 80, "# ", "# ")
            if "redaction" in schema
            else []
        ),
        "",
        "[schema]",
        f"format = {SCHEMA_FORMAT}",
        f"delimiters = {_toml_str(schema['delimiters'])}",
    ]
    for key in ("generated_by", "generated_at", "source", "server", "relations_sample"):
        if schema.get(key):
            lines.append(f"{key} = {_toml_str(str(schema[key]))}")
    for fam in schema["families"]:
        lines += ["", "[[family]]", f"pattern = {_toml_str(fam['pattern'])}"]
        if fam.get("type") is not None:
            lines.append(f"type = {_toml_str(fam['type'])}")
        lines.append(f"description = {_toml_str(fam.get('description') or '')}")
        for key in RULE_KEYS[1:]:
            value = fam.get(key)
            if value is not None:
                lines.append(f"{key} = {_toml_value(value)}")
        obs = fam["observed"] if "observed" in fam else None
        if obs:
            lines.append("[family.observed]")
            for k, v in obs.items():
                if v is not None and v != {} and v != []:
                    lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
    return "\n".join(lines) + "\n"


def _md_cell(text) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_code(text: str) -> str:
    text = _md_cell(text)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def ttl_label(fam: SchemaFamily) -> str:
    """The TTL column of the markdown table: the declared policy, and what the dump showed."""
    from ..format import fmt_duration_ms

    obs = fam["observed"] if "observed" in fam else None
    declared = fam.get("ttl") or "optional"
    text = {"required": "required", "none": "none", "optional": "optional"}.get(declared, declared)
    if fam.get("max_ttl") is not None:
        text += f", max {fam['max_ttl']}"
    if obs and obs["ttl_policy"] == "mixed":
        text += f" ({obs['ttl_share']:.0%} of keys)"
    if obs and obs["ttl_median_ms"] is not None:
        text += f"; median {fmt_duration_ms(obs['ttl_median_ms'])}"
    return text


def render_markdown(schema: SchemaData) -> str:
    from ..format import fmt_bytes, fmt_int

    lines = [HEADER, ""]
    src = ", ".join(x for x in (schema["source"], schema["server"]) if x)
    if src:
        lines += [
            f"Inferred from {_md_cell(src)} by {schema['generated_by']}. Patterns: docs/schema.md.",
            "",
        ]
    if "redaction" in schema:  # --redact (docs/redact.md)
        lines += [f"_{_md_cell(schema['redaction']['note'])}_", ""]
    lines += [
        "| pattern | type | description | TTL | keys | memory | example |",
        "|---|---|---|---|--:|--:|---|",
    ]
    for fam in schema["families"]:
        obs = fam["observed"] if "observed" in fam else None
        typ = fam.get("type") or "any"
        if obs and obs["other_types"]:
            typ += " (also " + ", ".join(f"{t} {n}" for t, n in obs["other_types"].items()) + ")"
        lines.append(
            "| "
            + " | ".join(
                [
                    _md_code(fam["pattern"]),
                    _md_cell(typ),
                    _md_cell(fam.get("description") or ""),
                    _md_cell(ttl_label(fam)),
                    fmt_int(obs["keys"] if obs else None),
                    fmt_bytes(obs["memory_bytes"] if obs else None),
                    _md_code(obs["example"]) if obs and obs["example"] is not None else "",
                ]
            )
            + " |"
        )
    rel = [
        f"- {_md_code(fam['pattern'])} {x['via']} → {_md_code(x['family'])} "
        f"({x['share']:.0%} of {fmt_int(x['elements'])} elements sampled in {fmt_int(x['keys'])} keys)"
        for fam in schema["families"]
        if "observed" in fam
        for x in fam["observed"].get("relations", [])
    ]
    if rel:
        lines += [
            "",
            "Relationships (" + _md_cell(schema.get("relations_sample") or "sampled") + "):",
            "",
        ]
        lines += rel
    return "\n".join(lines) + "\n"


def render_json(schema: SchemaData) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"toml": render_toml, "markdown": render_markdown, "json": render_json}


class SchemaOutputError(Exception):
    pass


def not_ours(path: str) -> CommandError:
    """The line (exit 7) for a file at -o that is not a schema rdbscan wrote: left untouched."""
    return not_overwritten(
        path, "is not a schema rdbscan wrote", "choose another -o, or remove the file"
    )


def written_by_rdbscan(path: str) -> bool:
    """Whether a file is a schema rdbscan wrote (TOML/markdown header, or the JSON key)."""
    try:
        with open(path, encoding="utf-8") as fh:
            head = fh.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    if head.startswith(HEADER):
        return True
    return head.lstrip().startswith("{") and '"rdbscan_schema"' in head


def write_output(path: str, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same directory.  An existing file
    is replaced only when rdbscan wrote it: a user's file is never overwritten."""
    if os.path.lexists(path) and not (os.path.isfile(path) and written_by_rdbscan(path)):
        raise SchemaOutputError(not_ours(path).message)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".rdbscan-schema-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
