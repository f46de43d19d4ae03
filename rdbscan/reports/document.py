"""The document model: a report laid out once as a list of blocks (headings, key/value lines,
tables, findings, advice, notes), and the drawing of blocks as text (rich) and markdown; the HTML
drawing is rdbscan/reports/html/page.py.  JSON is the dict itself."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TypedDict

from .format import escape_text


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    numeric: set[int] = field(default_factory=set)  # right-aligned column indexes
    # The columns a narrow terminal may move below the table, the least important first
    # (None: the text columns but the first, from the right, then the numeric ones).
    detail: tuple[int, ...] | None = None


@dataclass
class Block:
    kind: str  # section | kv | table | advice | note
    text: str = ""
    items: list = field(default_factory=list)
    table: Table | None = None


def table(title, headers, rows, numeric=(), detail=None) -> Block:
    """A table block; `numeric`: the indexes of the right-aligned columns; `detail`: the
    columns a narrow terminal moves below the table, the least important first."""
    return Block("table", table=Table(title, headers, rows, set(numeric), detail))


class Advised(TypedDict):
    """What `advice` reads of a section's object: every section has its `advice`."""

    advice: list[str]


def advice(section: Advised) -> list[Block]:
    """The section's "What to do" sentences (its `advice`), one block each."""
    return [Block("advice", a) for a in section["advice"]]


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
            assert b.table is not None
            _draw_table(b.table, console)
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


# Between two columns of a text table: padding, the (blank) rule of box.SIMPLE_HEAD, padding.
_GAP = 3
_INDENT = "    "


def _moves(t: Table) -> list[int]:
    """The order in which the columns leave a table too wide for the terminal."""
    if t.detail is not None:
        return [i for i in t.detail if 0 < i < len(t.headers)]
    rest = range(len(t.headers) - 1, 0, -1)
    return [i for i in rest if i not in t.numeric] + [i for i in rest if i in t.numeric]


def _split_top(text: str) -> list[str]:
    """A list cell ("a, b (c, d), e") in its items, commas inside brackets kept."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0 and text[i + 1 : i + 2] == " ":
            items.append(text[start : i + 1])
            start = i + 2
    items.append(text[start:])
    return items


def _pack(first: str, items: list[tuple[str, str]], width: int) -> list[str]:
    """Lines that hold `first` then the (label, value) items, each value whole (it never spans
    two lines), continuation lines indented; a value wider than a line is split at the commas
    of its list (never inside an element), and an element wider than a line gets a line of
    its own."""
    from rich.cells import cell_len

    room = width - len(_INDENT)
    pieces: list[str] = []
    for label, value in items:
        if cell_len(label + value) <= room:
            pieces.append(label + value)
        elif cell_len(value) <= room:
            pieces += [label.rstrip(), value] if label else [value]
        else:
            pieces += ([label.rstrip()] if label else []) + _split_top(value)
    lines, line = [], first
    for piece in pieces:
        if cell_len(line) + 1 + cell_len(piece) <= width or line.strip() == "":
            line = f"{line} {piece}" if line.strip() else _INDENT + piece
        else:
            lines.append(line)
            line = _INDENT + piece
    lines.append(line)
    return lines


def _draw_table(t: Table, console) -> None:
    """A table that keeps every cell whole on one line: at its natural widths when the
    terminal is wide enough; else its headers wrap between words, and then the least important
    columns (Table.detail) leave the table, their values listed under it row by row."""
    from rich import box
    from rich.cells import cell_len
    from rich.table import Table as RichTable
    from rich.text import Text

    if not t.rows:
        if t.title:
            console.print(Text(f"{escape_text(t.title)}: none", style="dim"))
        return
    cells = [[escape_text(c) for c in row] for row in t.rows]
    n = len(t.headers)
    content = [max(cell_len(r[i]) for r in cells) for i in range(n)]
    full = [max(content[i], cell_len(t.headers[i])) for i in range(n)]
    word = [max([content[i]] + [cell_len(w) for w in t.headers[i].split()]) for i in range(n)]
    width = console.width

    def total(widths, cols):
        return sum(widths[i] for i in cols) + _GAP * (len(cols) - 1)

    kept = list(range(n))
    widths = full
    if total(full, kept) > width:
        widths = word
        for i in _moves(t):
            if total(widths, kept) <= width:
                break
            kept.remove(i)
        if total(widths, kept) > width:  # the rows as records: each cell on its own terms
            kept = [0]
    moved = [i for i in range(n) if i not in kept]
    if len(kept) > 1 or not moved:
        rt = RichTable(
            title=Text(escape_text(t.title), style="italic") if t.title else None,
            box=box.SIMPLE_HEAD,
            title_justify="left",
            show_edge=False,
            pad_edge=False,
        )
        for i in kept:
            rt.add_column(
                Text(t.headers[i]),
                justify="right" if i in t.numeric else "left",
                overflow="fold",
                width=widths[i],
            )
        for row in cells:
            rt.add_row(*[Text(row[i]) for i in kept])
        console.print(rt)
    elif t.title:
        console.print(Text(escape_text(t.title), style="italic"))
    if not moved:
        return
    if len(kept) > 1:
        names = ", ".join(t.headers[i] for i in moved)
        by = f", by {t.headers[0]}" if t.headers[0] else ""
        console.print(Text(f"{names}{by}:", style="dim"))
    labelled = len(moved) > 1 or len(kept) == 1
    for row in cells:
        items = [
            (f"{t.headers[i]}: " if labelled else "", row[i])
            for i in moved
            if row[i] not in ("", "-")
        ]
        if not items:
            continue
        items = [(label, value + ";") for label, value in items[:-1]] + items[-1:]
        for n_line, line in enumerate(_pack(row[0] + " ", items, width)):
            text = Text(line.rstrip())
            if n_line == 0:
                text.stylize("bold", 0, len(row[0]))
            console.print(text, overflow="ignore", crop=False, soft_wrap=True)
