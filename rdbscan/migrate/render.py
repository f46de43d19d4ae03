"""The migrate report as text (a terminal), Markdown (tickets, wikis), JSON (scripts: the
dict run.migrate builds, docs/migrate.md "JSON") or HTML (one self-contained page)."""

from __future__ import annotations

import json

from ..reports.format import wrapped as _wrapped

# The text's width when the caller gives none (cli/migrate.py gives the terminal's, or for a
# file the report's: COLUMNS, else 140); never narrower than MIN_WIDTH.
DEFAULT_WIDTH = 96
MIN_WIDTH = 40


def size(n: float) -> str:
    """Bytes as 1.2 MiB (binary units, one decimal)."""
    value = float(n)
    sign = "-" if value < 0 else ""
    value = abs(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{sign}{value:.0f} {unit}" if unit == "B" else f"{sign}{value:.1f} {unit}"
        value /= 1024
    return f"{sign}{value:.1f} TiB"  # pragma: no cover


def pct(x: float) -> str:
    return f"{100 * x:+.1f}%"


def short(text: str, width: int = 40) -> str:
    """A key name cut to `width` characters for a table (the JSON has it whole)."""
    return text if len(text) <= width else text[: width - 3] + "..."


def _keys_line(f: dict) -> str:
    if not f["keys"]:
        return ""
    ex = ", ".join(short(k) for k in f["examples"])
    more = " ..." if f["keys"] > len(f["examples"]) else ""
    fam = ", ".join(f"{x['family']} ({x['keys']:,})" for x in f["families"])
    return f"{f['keys']:,} keys: {ex}{more}; families: {fam}"


def _table(
    headers: list[str], rows: list[list[str]], markdown: bool, width: int = DEFAULT_WIDTH
) -> list[str]:
    """The rows under their headers; as text, a last column that would take a line past
    `width` is wrapped within the room left to it, or when that is under 20 characters (or
    narrower than one of its words), on lines of its own under the row, indented."""
    if markdown:
        out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return out
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    start = sum(widths[:-1]) + 2 * (len(widths) - 1)  # where the last column begins
    room = max(width - start, len(headers[-1]))
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line.rstrip(), "─" * min(len(line.rstrip()), max(width, start + len(headers[-1])))]
    for r in rows:
        cells = "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths))
        if start + len(r[-1]) <= width:
            out.append((cells + "  " + r[-1]).rstrip())
        elif room >= 20 and max(map(len, r[-1].split())) <= room:
            last = _wrapped(r[-1], room)
            out.append((cells + "  " + last[0]).rstrip())
            out += [" " * start + more for more in last[1:]]
        else:
            out.append(cells.rstrip())
            out += _wrapped(r[-1], width, "    ", "    ")
    return out


def _heading(text: str, markdown: bool, level: int = 2, width: int = DEFAULT_WIDTH) -> list[str]:
    if markdown:
        return ["", "#" * level + " " + text, ""]
    lines = _wrapped(text, width) if len(text) + 2 > width else [text]
    return ["", *lines[:-1], (lines[-1] + " " + "─" * max(0, width - len(lines[-1]) - 1)).rstrip()]


def render(report: dict, fmt: str = "text", width: int | None = None) -> str:
    """The report as text (fmt "text", `width` characters wide: long lines are wrapped),
    Markdown or JSON: the summary per target, then per dump and target the findings and the
    memory there (_target_lines)."""
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    md = fmt == "markdown"
    w = max(width or DEFAULT_WIDTH, MIN_WIDTH)
    out: list[str] = []
    if md:
        out.append("# rdbscan migrate")
    out += _heading("Will it load, and what will it cost", md, width=w)
    out += _table(list(_SUMMARY_HEADERS), _summary_rows(report["summary"]), md, w)
    for d in report["dumps"]:
        out += _heading(_dump_title(d), md, width=w)
        if not d["complete"]:
            out.append("(the dump was not read to its end: the figures cover the keys read)")
        for t in d["targets"]:
            out += _target_lines(t, md, w)
    return "\n".join(out).lstrip("\n") + "\n"


def _target_lines(t: dict, md: bool, width: int = DEFAULT_WIDTH) -> list[str]:
    """One target of one dump, as text or Markdown lines: its verdict, each blocker with its
    keys and fix, what the loader does with the rest, and the memory there (per type, the
    families that change most, the encodings that change).  Text lines are wrapped at
    `width`, a blocker's keys and fix indented under it."""
    verdict = "loads" if t["loads"] else f"REFUSED: {t['blockers']} blockers"
    out = _heading(f"{t['target']}: {verdict}", md, 3, width)
    for f in t["findings"]:
        if not f["blocker"]:
            continue
        blocker = f"BLOCKER {f['subject']}: {f['what']} [{f['source']}]"
        keys = _keys_line(f)
        if md:
            out.append(f"- {blocker}")
            out += [f"  {line}" for line in (keys, f["fix"] and f"-> {f['fix']}") if line]
            continue
        out += _wrapped(blocker, width, rest="    ")
        if keys:
            out += _wrapped(keys, width, "    ", "      ")
        if f["fix"]:
            out += _wrapped(f["fix"], width, "    -> ", "       ")
    others = [f for f in t["findings"] if not f["blocker"]]
    if others:
        out.append("")
        out += _table(list(_OTHERS_HEADERS), _other_rows(others), md, width)
    out.append("")
    out += [_memory_line(t)] if md else _wrapped(_memory_line(t), width)
    if t["by_type"]:
        out.append("")
        out += _table(
            ["type", "keys", "there", "today", "difference"],
            _cost_rows(t["by_type"], "type"),
            md,
            width,
        )
    if t["families"]:
        out.append("")
        out += _table(
            ["family (largest changes)", "keys", "there", "today", "difference"],
            _cost_rows(t["families"], "family", short),
            md,
            width,
        )
    if t["encoding_changes"]:
        out.append("")
        out += _table(
            list(_ENCODING_HEADERS),
            _encoding_rows(t["encoding_changes"], lambda k: short(k, 30)),
            md,
            width,
        )
    return out


_SUMMARY_HEADERS = ("target", "loads", "blockers", "memory (estimate)", "today", "difference")
_OTHERS_HEADERS = ("record", "action", "keys", "what the server does")
_ENCODING_HEADERS = ("type", "encoding today", "there", "keys", "memory there", "today", "e.g.")


def _summary_rows(summary: list[dict]) -> list[list[str]]:
    """Per target: whether it loads, its blockers, the memory there against today."""
    return [
        [
            s["target"],
            "yes" if s["loads"] else "NO",
            str(s["blockers"]),
            size(s["memory_bytes"]),
            size(s["today_bytes"]),
            f"{size(s['difference_bytes'])} ({pct(s['difference'])})",
        ]
        for s in summary
    ]


def _dump_title(d: dict) -> str:
    """A dump's heading: its path, server, magic, keys and memory today."""
    title = (
        f"{d['path']}: {d['server'] or 'unknown server'} {d['server_version'] or ''}, "
        f"{d['magic']}, {d['keys']:,} keys, {size(d['memory_bytes'])} today"
    )
    return title.replace("  ", " ")


def _other_rows(others: list[dict]) -> list[list[str]]:
    """The findings that block nothing: the record, the action, its keys, what happens."""
    return [
        [f["subject"], f["action"], f"{f['keys']:,}" if f["keys"] else "", f["what"]]
        for f in others
    ]


def _cost_rows(items: list[dict], name: str, shown=lambda text: text) -> list[list[str]]:
    """Memory there against today, per type or family (`name`, drawn by `shown`)."""
    return [
        [
            shown(b[name]),
            f"{b['keys']:,}",
            size(b["memory_bytes"]),
            size(b["today_bytes"]),
            size(b["memory_bytes"] - b["today_bytes"]),
        ]
        for b in items
    ]


def _encoding_rows(changes: list[dict], example) -> list[list[str]]:
    """The encodings that change on load, with examples drawn by `example`."""
    return [
        [
            c["type"],
            c["from"] or "",
            c["to"] or "",
            f"{c['keys']:,}",
            size(c["memory_bytes"]),
            size(c["today_bytes"]),
            ", ".join(example(k) for k in c["examples"]),
        ]
        for c in changes
    ]


def blocks(report: dict) -> list:
    """The report as the blocks of rdbscan/reports/document.py (what the HTML page draws)."""
    from ..reports.document import Block, table

    out: list[Block] = [Block("section", "Will it load, and what will it cost")]
    out.append(
        table("", list(_SUMMARY_HEADERS), _summary_rows(report["summary"]), numeric=(2, 3, 4, 5))
    )
    for d in report["dumps"]:
        out.append(Block("section", _dump_title(d)))
        if not d["complete"]:
            out.append(
                Block("note", "The dump was not read to its end: the figures cover the keys read.")
            )
        for t in d["targets"]:
            out += _target_blocks(t)
    return out


def _target_blocks(t: dict) -> list:
    """One target of one dump as blocks: its verdict and profile, each blocker as a critical
    finding, what the loader does with the rest, and the memory there."""
    from ..reports.document import Block, table

    verdict = "loads" if t["loads"] else f"REFUSED: {t['blockers']} blockers"
    out = [Block("kv", items=[(t["target"], f"{verdict} (profile {t['profile']})")])]
    for f in t["findings"]:
        if f["blocker"]:
            keys = _keys_line(f)
            message = f"{f['subject']}: {f['what']} [{f['source']}]"
            out.append(
                Block(
                    "finding",
                    items=["critical", message + (f" ({keys})" if keys else ""), f["fix"]],
                )
            )
    others = [f for f in t["findings"] if not f["blocker"]]
    out.append(
        table(
            f"{t['target']}: what the loader does with the rest",
            list(_OTHERS_HEADERS),
            _other_rows(others),
            numeric=(2,),
        )
    )
    out.append(Block("note", _memory_line(t)))
    out.append(_costs(f"{t['target']}: per type", "type", t["by_type"]))
    out.append(
        _costs(f"{t['target']}: the families whose memory changes most", "family", t["families"])
    )
    out.append(
        table(
            f"{t['target']}: encodings that change on load",
            list(_ENCODING_HEADERS),
            _encoding_rows(t["encoding_changes"], lambda k: k),
            numeric=(3, 4, 5),
        )
    )
    return out


def _memory_line(t: dict) -> str:
    line = (
        f"Memory there: {size(t['memory_bytes'])} against {size(t['today_bytes'])} "
        f"today ({size(t['difference_bytes'])}, {pct(t['difference'])}); "
        f"{t['keys_changing_encoding']:,} keys change encoding"
    )
    if t.get("not_projected_keys"):
        line += (
            f". Not projected: {t['not_projected_keys']:,} keys "
            f"({size(t['not_projected_today_bytes'])} today): {NOT_PROJECTED}"
        )
    return line


NOT_PROJECTED = (
    "the database keeps no element sizes, only the dump has them (rdbscan migrate DUMP, or "
    "migrate -o DB.duckdb to keep the projections)"
)


def render_html(report: dict) -> str:
    """The report as one self-contained HTML page (the report's page frame: reports/html/page)."""
    from ..reports.html import page as P

    targets = ", ".join(report["targets"])
    header = (
        f'<header><h1>rdbscan migrate</h1><p class="sub">onto {P.esc(targets)} · '
        f"rdb-version-check {P.esc(report['rdb_version_check'])} · "
        f"{len(report['dumps'])} dumps</p></header>"
    )
    return P.page(
        f"rdbscan migrate: {targets}",
        header,
        '<section id="sections">' + P.blocks_html(blocks(report)) + "</section>",
        report,
        data_id="rdbscan-migrate",
    )


def _costs(title: str, by: str, rows: list):
    """A target's memory there against today, one row per `by` (a type or a family)."""
    from ..reports.document import table

    return table(
        title,
        [by, "keys", "there", "today", "difference"],
        _cost_rows(rows, by),
        numeric=(1, 2, 3, 4),
    )
