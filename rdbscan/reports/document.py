"""The document model: a report laid out once as a list of blocks (headings, key/value lines,
tables, findings, advice, notes), and the drawing of blocks as text (rich) and markdown; the HTML
drawing is rdbscan/reports/html/page.py.  JSON is the dict itself."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .format import escape_text


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    numeric: set[int] = field(default_factory=set)  # right-aligned column indexes


@dataclass
class Block:
    kind: str  # section | kv | table | advice | note
    text: str = ""
    items: list = field(default_factory=list)
    table: Table | None = None


def table(title, headers, rows, numeric=()) -> Block:
    """A table block; `numeric`: the indexes of the right-aligned columns."""
    return Block("table", table=Table(title, headers, rows, set(numeric)))


def advice(section: dict) -> list[Block]:
    """The section's "What to do" sentences (its `advice`), one block each."""
    return [Block("advice", a) for a in section.get("advice", [])]


SEVERITY_MARK = {"critical": "CRIT", "warning": "WARN", "info": "info"}


def render_json(report: dict) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False, default=str)


_MD_SPECIAL = re.compile(r"([\\|`*_\[\]~])")


def _md_cell(text: str) -> str:
    """One cell or line of Markdown text: escaped, with markup characters taken literally."""
    return _MD_SPECIAL.sub(r"\\\1", escape_text(text)).replace("<", "&lt;")


def draw_markdown(blocks: list[Block], title: str) -> str:
    """Blocks (see document) as markdown under a level-1 title."""
    lines = [f"# {title}", ""]
    for i, b in enumerate(blocks):
        nxt = blocks[i + 1] if i + 1 < len(blocks) else None
        if b.kind == "section":
            lines += [f"## {_md_cell(b.text)}", ""]
        elif b.kind == "kv":
            lines += [f"- **{label}:** {_md_cell(value)}" for label, value in b.items] + [""]
        elif b.kind == "table":
            t = b.table
            assert t is not None
            if t.title:
                lines += [f"**{_md_cell(t.title)}**", ""]
            if not t.rows:
                lines += ["(none)", ""]
                continue
            lines.append("| " + " | ".join(_md_cell(h) for h in t.headers) + " |")
            lines.append(
                "|"
                + "|".join("---:" if i in t.numeric else "---" for i in range(len(t.headers)))
                + "|"
            )
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in t.rows]
            lines.append("")
        elif b.kind == "finding":
            sev, message, advice = b.items
            lines.append(f"- **{SEVERITY_MARK[sev]}** {_md_cell(message)} → {_md_cell(advice)}")
            if nxt is None or nxt.kind != "finding":
                lines.append("")
        elif b.kind == "advice":
            lines += [f"> **What to do:** {_md_cell(b.text)}", ""]
        elif b.kind == "note":
            lines += [f"_{_md_cell(b.text)}_", ""]
    return "\n".join(lines).rstrip() + "\n"


_SEVERITY_STYLE = {"critical": "bold red", "warning": "bold yellow", "info": "bold cyan"}


def draw_text(blocks: list[Block], console=None) -> None:
    """Print blocks (see document) with rich to `console` (default: stdout)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    if console is None:
        import os
        import sys

        wide = not sys.stdout.isatty() and "COLUMNS" not in os.environ
        console = Console(width=140 if wide else None)
    for b in blocks:
        if b.kind == "section":
            console.print()
            console.rule(Text(escape_text(b.text), style="bold"), align="left")
        elif b.kind == "kv":
            grid = RichTable.grid(padding=(0, 2))
            grid.add_column(style="bold")
            grid.add_column()
            for label, value in b.items:
                grid.add_row(Text(escape_text(label)), Text(escape_text(value)))
            console.print(grid)
        elif b.kind == "table":
            t = b.table
            assert t is not None
            if not t.rows:
                if t.title:
                    console.print(Text(f"{escape_text(t.title)}: none", style="dim"))
                continue
            rt = RichTable(
                title=Text(escape_text(t.title), style="italic") if t.title else None,
                box=box.SIMPLE_HEAD,
                title_justify="left",
                show_edge=False,
                pad_edge=False,
            )
            for i, h in enumerate(t.headers):
                longest = max((len(str(r[i])) for r in t.rows), default=0)
                rt.add_column(
                    Text(h),
                    justify="right" if i in t.numeric else "left",
                    overflow="fold",
                    no_wrap=i in t.numeric,
                    min_width=min(longest, 28) if i == 0 else None,
                )
            for row in t.rows:
                rt.add_row(*[Text(escape_text(c)) for c in row])
            console.print(rt)
        elif b.kind == "finding":
            # a hanging indent: continuation lines start under the message, not under the mark
            sev, message, advice = b.items
            grid = RichTable.grid(padding=(0, 1))
            grid.add_column(no_wrap=True)
            grid.add_column()
            grid.add_row(
                Text(SEVERITY_MARK[sev], style=_SEVERITY_STYLE[sev]),
                Text.assemble(escape_text(message), (" -> ", "dim"), escape_text(advice)),
            )
            console.print(grid)
        elif b.kind == "advice":
            console.print(Text.assemble(("What to do: ", "bold yellow"), escape_text(b.text)))
        elif b.kind == "note":
            console.print(Text(escape_text(b.text), style="dim"))
